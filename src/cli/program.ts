import { Command, CommanderError, Help } from 'commander';
import { ShopSyncError } from '../errors.js';
import { commandList, REDIS_COMMANDS } from './commands/registry.js';
import { HELP_EXAMPLES } from './help.js';
import { type CliIO, writeLine } from './io.js';
import { packageVersion } from './version.js';

const EXIT_USAGE = 2;
const EXIT_FAILED = 1;

/**
 * The program for one command line. The command it names is built in full; a Redis command it does
 * not name is listed by its summary only, so that BullMQ is loaded only by the commands that use it.
 */
export async function buildProgram(io: CliIO, argv: readonly string[] = []): Promise<Command> {
  const program = new Command('shop-sync')
    .description('Sync a marketplace shop into SQLite snapshots, diff them, and write CSV and SQLite feeds.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError('(add --help for usage)')
    .enablePositionalOptions();
  const named = namedCommand(argv);
  const { before, after } = commandList(io);
  const redis = await Promise.all(
    Object.entries(REDIS_COMMANDS).map(async ([name, lazy]) =>
      name === named ? (await lazy.load())(io) : new Command(name).summary(lazy.summary),
    ),
  );
  for (const command of [...before, ...redis, ...after]) program.addCommand(command);
  // A Redis command not loaded has no options yet: the list shows the usage it declares instead.
  program.configureHelp({
    subcommandTerm: (command) => {
      const lazy = command.name() === named ? undefined : REDIS_COMMANDS[command.name()];
      return lazy ? `${command.name()} ${lazy.usage}`.trimEnd() : new Help().subcommandTerm(command);
    },
  });
  for (const command of [program, ...program.commands]) {
    const example = HELP_EXAMPLES[command.name()];
    if (example) command.addHelpText('after', example);
    command.exitOverride().configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Commander's own errors (an unknown option, a bad value) begin like every other error of ours.
      outputError: (text, write) => write(text.replace(/^error: /, 'shop-sync: ')),
    });
  }
  return program;
}

/** The command a command line names: its first word, or the one after `help`. */
function namedCommand(argv: readonly string[]): string | undefined {
  const words = argv.filter((arg) => !arg.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/** Runs one command line and returns the exit status: the only place errors become exit codes. */
export async function run(argv: readonly string[], io: CliIO): Promise<number> {
  const debug = io.env.LOG_LEVEL === 'debug' || io.env.LOG_LEVEL === 'trace';
  try {
    await (await buildProgram(io, argv)).parseAsync([...argv], { from: 'user' });
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
