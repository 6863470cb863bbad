import { existsSync } from 'node:fs';
import { StoreError, UsageError } from '../errors.js';
import { storeItems, writeInventoryCsv } from '../export/formats/inventory-csv.js';
import { runContents } from '../export/formats/run-contents.js';
import { writeSnapshotSqlite } from '../export/formats/snapshot-sqlite.js';
import { commitFiles, prepareFile, writeFileAtomic } from '../export/publish/atomic.js';
import { fromSqlite, openStore, type Store } from '../store/open.js';
import type { ShopPaths } from '../store/paths.js';
import { latestCompleteRun, type RunSummary, requireCompleteRun } from '../store/run-records.js';
import { runMessages } from './run-messages.js';
import { writeToStdout } from './stdout.js';

export type ExportFormat = 'csv' | 'sqlite';

export interface ExportRequest {
  readonly shop: string;
  readonly paths: ShopPaths;
  /** Default: the latest complete run. */
  readonly run: number | undefined;
  readonly format: ExportFormat;
  /** Written atomically; without it CSV goes to `stdout`. */
  readonly out: string | undefined;
  readonly stdout: NodeJS.WritableStream;
}

/** Exports the inventory of one complete run (`shop-sync export`); returns the run exported. */
export async function exportRun(request: ExportRequest): Promise<number> {
  const { shop, paths, format, out } = request;
  if (format === 'sqlite' && out === undefined) {
    throw new UsageError('--format sqlite needs --out FILE: a SQLite file cannot be written to stdout.');
  }
  if (!existsSync(paths.store)) {
    throw new StoreError(
      `Shop ${shop} has no store at ${paths.store} yet: run "shop-sync sync" first.`,
      paths.store,
    );
  }
  const store = openStore(paths.store);
  try {
    const contents = runContents(store, shop, completeRun(store, shop, request.run));
    const run = contents.run.run;
    const csv = (stream: NodeJS.WritableStream) => writeInventoryCsv(store.db, storeItems(), run, stream);
    if (format === 'sqlite' && out !== undefined) {
      await commitFiles([await prepareFile(out, (temp) => writeSnapshotSqlite(temp, store.path, contents))]);
    } else if (out !== undefined) {
      await writeFileAtomic(out, csv);
    } else {
      await writeToStdout(() => csv(request.stdout));
    }
    return run;
  } catch (error) {
    throw fromSqlite(`Cannot read store ${store.path}`, store.path, error);
  } finally {
    store.close();
  }
}

function completeRun(store: Store, shop: string, wanted: number | undefined): RunSummary {
  const run = wanted ?? latestCompleteRun(store);
  if (run === null) {
    throw new StoreError(
      `Shop ${shop} has no complete run to export yet: run "shop-sync sync" first.`,
      store.path,
    );
  }
  return requireCompleteRun(store, run, runMessages(shop, 'exported'));
}
