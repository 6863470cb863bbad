import { Command, Option } from 'commander';
import type { ExportFlags } from '../actions/export.js';
import type { CliIO } from '../io.js';
import { runNumber } from './option-parsers.js';

export function exportCommand(io: CliIO): Command {
  return (
    new Command('export')
      .description('Write the inventory of one complete run (default: the latest) as CSV or SQLite.')
      .option('--shop <name>', 'the shop (default: the configured one)')
      .option('--run <run>', 'the run to export (default: the latest complete run)', runNumber)
      .addOption(new Option('--format <format>', 'csv or sqlite').choices(['csv', 'sqlite']).default('csv'))
      .option('--out <file>', 'write this file atomically instead of stdout (required for sqlite)')
      // What it does is loaded when it runs: `--help` and the other commands do not compile it.
      .action(async (flags: ExportFlags) => (await import('../actions/export.js')).exportAction(io, flags))
  );
}
