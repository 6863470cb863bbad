import { Command, Option } from 'commander';
import type { DiffFlags } from '../actions/diff.js';
import type { CliIO } from '../io.js';
import { runNumber } from './option-parsers.js';

export function diffCommand(io: CliIO): Command {
  return (
    new Command('diff')
      .description('Show the changes between two complete runs (default: the last two).')
      .option('--shop <name>', 'the shop (default: the configured one)')
      .option('--from <run>', 'the older run (default: the complete run before --to)', runNumber)
      .option('--to <run>', 'the newer run (default: the latest complete run)', runNumber)
      .addOption(
        new Option('--format <format>', 'table, csv or json')
          .choices(['table', 'csv', 'json'])
          .default('table'),
      )
      .option('--out <file>', 'write this file atomically instead of stdout')
      // What it does is loaded when it runs: `--help` and the other commands do not compile it.
      .action(async (flags: DiffFlags) => (await import('../actions/diff.js')).diffAction(io, flags))
  );
}
