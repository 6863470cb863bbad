import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { findShop } from '../../config.js';
import { type ExportFormat, exportRun } from '../../export/export-run.js';
import { shopPaths } from '../../store/paths.js';
import { type CliIO, commandContext } from '../io.js';

interface ExportFlags {
  shop?: string;
  run?: number;
  format: ExportFormat;
  out?: string;
}

export function exportCommand(io: CliIO): Command {
  return new Command('export')
    .description('Write the inventory of one complete run (default: the latest) as CSV or SQLite.')
    .option('--shop <name>', 'the shop (default: the configured one)')
    .option('--run <run>', 'the run to export (default: the latest complete run)', runNumber)
    .addOption(new Option('--format <format>', 'csv or sqlite').choices(['csv', 'sqlite']).default('csv'))
    .option('--out <file>', 'write this file atomically instead of stdout (required for sqlite)')
    .action(async (flags: ExportFlags) => {
      const { config } = commandContext(io);
      const shop = findShop(config, flags.shop).name;
      await exportRun({
        shop,
        paths: shopPaths(config.dataDir, shop),
        run: flags.run,
        format: flags.format,
        out: flags.out === undefined ? undefined : path.resolve(io.cwd, flags.out),
        stdout: io.stdout,
      });
    });
}

function runNumber(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('a run is a positive whole number.');
  return Number(value);
}
