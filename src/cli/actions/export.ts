import path from 'node:path';
import { shopPaths } from '../../store/paths.js';
import { commandContext } from '../context.js';
import { type ExportFormat, exportRun } from '../export-run.js';
import type { CliIO } from '../io.js';
import { readableShop } from './shop-store.js';

export interface ExportFlags {
  shop?: string;
  run?: number;
  format: ExportFormat;
  out?: string;
}

/** `export`: one complete run's inventory as CSV or SQLite. */
export async function exportAction(io: CliIO, flags: ExportFlags): Promise<void> {
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
}
