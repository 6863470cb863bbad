import path from 'node:path';
import { Command, Option } from 'commander';
import { shopPaths } from '../../store/paths.js';
import { type ExportFormat, exportRun } from '../export-run.js';
import { type CliIO, commandContext } from '../io.js';
import { runNumber } from './option-parsers.js';
import { readableShop } from './shop-store.js';

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
      const shop = readableShop(config, flags.shop);
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
