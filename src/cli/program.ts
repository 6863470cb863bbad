import { Command, CommanderError } from 'commander';
import { ShopSyncError } from '../errors.js';
import { commandList } from './commands/index.js';
import { type CliIO, writeLine } from './io.js';

const EXIT_USAGE = 2;
const EXIT_FAILED = 1;

export function buildProgram(io: CliIO): Command {
  const program = new Command('shop-sync')
    .description('Sync a marketplace shop into SQLite snapshots, diff them, and write CSV and SQLite feeds.')
    .showHelpAfterError('(add --help for usage)')
    .enablePositionalOptions();
  for (const command of commandList(io)) program.addCommand(command);
  for (const command of [program, ...program.commands]) {
    command.exitOverride().configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });
  }
  return program;
}

/** Runs one command line and returns the exit status: the only place errors become exit codes. */
export async function run(argv: readonly string[], io: CliIO): Promise<number> {
  const debug = io.env.LOG_LEVEL === 'debug' || io.env.LOG_LEVEL === 'trace';
  try {
    await buildProgram(io).parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_USAGE;
    if (error instanceof ShopSyncError) {
      writeLine(io.stderr, `shop-sync: ${error.message}`);
      if (debug && error.stack) writeLine(io.stderr, error.stack);
      return error.exitCode;
    }
    const message = error instanceof Error ? error.message : String(error);
    writeLine(io.stderr, `shop-sync: unexpected error: ${message}`);
    if (debug && error instanceof Error && error.stack) writeLine(io.stderr, error.stack);
    return EXIT_FAILED;
  }
}
