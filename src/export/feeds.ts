import { rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { StoreError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/open.js';
import type { ShopPaths } from '../store/paths.js';
import { getRun } from '../store/runs.js';
import {
  commitFiles,
  discardFiles,
  type PreparedFile,
  prepareFile,
  prepareStream,
  removeLeftovers,
} from './atomic.js';
import { writeChangesCsv } from './changes-csv.js';
import { writeInventoryCsv } from './inventory-csv.js';
import { openReader } from './reader.js';
import { type RunContents, runContents } from './run-contents.js';
import { createSnapshotSqlite } from './snapshot-sqlite.js';

export interface FeedOptions {
  /**
   * Write `inventory.csv.gz` and `changes.csv.gz` instead of the plain files. The plain files of an
   * earlier setting are then removed (and the other way round), so that no stale feed lies beside
   * the current one looking valid. `snapshot.sqlite` is never compressed: consumers open it in place.
   */
  readonly gzip: boolean;
  readonly log: Logger;
  readonly onPoint?: (point: 'feed-prepared' | 'feeds-renamed' | 'published') => void;
}

type StreamWriter = (out: NodeJS.WritableStream) => Promise<void>;

/**
 * Writes the feeds of complete run `run`: its snapshot as CSV, its changes since the previous
 * complete run as CSV (header only for a first run), and both in `snapshot.sqlite`.
 *
 * All three are written to temporary files first and renamed only when all three are complete, so a
 * failure while writing any of them leaves every previous feed in place. Reads go through their own
 * connection: a long write must not hold `store`'s connection busy while the sync still uses it.
 */
export async function writeFeeds(
  store: Store,
  paths: ShopPaths,
  run: number,
  options: FeedOptions,
): Promise<void> {
  const shop = path.basename(paths.dir);
  const summary = getRun(store, run);
  if (summary?.status !== 'complete') {
    throw new StoreError(
      `Cannot write the feeds of shop ${shop} from run ${run}: it is not a complete run.`,
      store.path,
    );
  }
  // runSync holds the shop's lease: no other writer of these feeds is alive.
  await Promise.all(feedFiles(paths).map(removeLeftovers));
  const reader = openReader(store);
  let prepared: PreparedFile[];
  const contents = runContents(reader, shop, summary);
  try {
    prepared = await prepareFeeds(contents, paths, options.gzip);
  } finally {
    reader.close();
  }
  for (const _file of prepared) options.onPoint?.('feed-prepared');
  await commitFiles(prepared);
  options.onPoint?.('feeds-renamed');
  options.onPoint?.('published');
  await removeStaleCounterparts(paths, options.gzip);
  options.log.info(
    { run, previousRun: contents.previousRun, feeds: paths.feedsDir, gzip: options.gzip },
    'feeds written',
  );
}

/** Writes the three feeds to temporary files; on failure none of them is left behind. */
async function prepareFeeds(contents: RunContents, paths: ShopPaths, gzip: boolean): Promise<PreparedFile[]> {
  const csv = (file: string, write: StreamWriter) =>
    gzip
      ? prepareStream(`${file}.gz`, gzipped(write), { label: 'feed' })
      : prepareStream(file, write, { label: 'feed' });
  const prepared: PreparedFile[] = [];
  try {
    // The snapshot file is filled while the inventory CSV is written: the snapshot is read once.
    const snapshotFile = await prepareFile(
      paths.snapshotSqlite,
      async (temp) => {
        const snapshot = createSnapshotSqlite(temp, contents);
        try {
          const items = copied(contents.items, snapshot.addItem);
          prepared.push(await csv(paths.inventoryCsv, (out) => writeInventoryCsv(items, out)));
          prepared.push(await csv(paths.changesCsv, (out) => writeChangesCsv(contents.changes, out)));
          await snapshot.addChanges(contents.changes);
          snapshot.finish();
        } finally {
          snapshot.close();
        }
      },
      { label: 'feed' },
    );
    return [...prepared, snapshotFile];
  } catch (error) {
    await discardFiles(prepared);
    throw error;
  }
}

/** `items`, handing each to `copy` as it passes. */
function* copied<T>(items: Iterable<T>, copy: (item: T) => void): IterableIterator<T> {
  for (const item of items) {
    copy(item);
    yield item;
  }
}

function gzipped(write: StreamWriter): StreamWriter {
  return async (out) => {
    const gzip = createGzip();
    const compressed = pipeline(gzip, out, { end: false });
    try {
      await write(gzip);
      gzip.end();
    } catch (error) {
      gzip.destroy(error as Error);
      await compressed.catch(() => undefined);
      throw error;
    }
    await compressed;
  };
}

function feedFiles(paths: ShopPaths): string[] {
  const csv = [paths.inventoryCsv, paths.changesCsv];
  return [...csv, ...csv.map((file) => `${file}.gz`), paths.snapshotSqlite];
}

async function removeStaleCounterparts(paths: ShopPaths, gzip: boolean): Promise<void> {
  const stale = [paths.inventoryCsv, paths.changesCsv].map((file) => (gzip ? file : `${file}.gz`));
  await Promise.all(stale.map((file) => rm(file, { force: true })));
}
