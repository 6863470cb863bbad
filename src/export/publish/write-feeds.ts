import { copyFile, link, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { ShopSyncError, StoreError } from '../../errors.js';
import { fsyncPath } from '../../fsync-path.js';
import type { Logger } from '../../log.js';
import { type Store, storeError } from '../../store/open.js';
import type { ShopPaths } from '../../store/paths.js';
import { publishedRun } from '../../store/published.js';
import { getRun, previousCompleteRun } from '../../store/run-records.js';
import { writeChangesCsv } from '../formats/changes-csv.js';
import { writeInventoryCsv } from '../formats/inventory-csv.js';
import { type PublishedInventory, spliceInventoryCsv, UnlikeSnapshot } from '../formats/inventory-splice.js';
import { type RunContents, runContents } from '../formats/run-contents.js';
import {
  buildSnapshotSqlite,
  isSnapshotOf,
  type SnapshotSqlite,
  updateSnapshotSqlite,
} from '../formats/snapshot-sqlite.js';
import { streamInto } from './atomic.js';
import { describeCause } from './cause.js';
import {
  createFeedsDir,
  type FeedsPath,
  inspectFeedsPath,
  removeOldFeedDirs,
  switchFeeds,
} from './feeds-dir.js';

/** Where publishing the feeds has got to; the fault suite kills the process at each. */
export type FeedPoint = 'feed-prepared' | 'feeds-renamed' | 'published';

export interface FeedOptions {
  /**
   * Write `inventory.csv.gz` and `changes.csv.gz` instead of the plain files. `snapshot.sqlite` is
   * never compressed: consumers open it in place.
   */
  readonly gzip: boolean;
  readonly log: Logger;
  /** Called synchronously after each feed file is written, after the switch and after the record. */
  readonly onPoint?: (point: FeedPoint) => void;
  /** Records, on the caller's connection to the store, that the feeds now in place reflect the run. */
  readonly record: () => void;
}

type StreamWriter = (out: NodeJS.WritableStream) => Promise<void>;

const SNAPSHOT = 'snapshot.sqlite';
/** Every name a feed file has had, for cleaning up directories of earlier versions. */
const FEED_NAMES = ['inventory.csv', 'changes.csv', 'inventory.csv.gz', 'changes.csv.gz', SNAPSHOT];

/**
 * Publishes the feeds of complete run `run`: its snapshot as CSV, its changes since the run the
 * published feeds reflect (normally the previous complete run; more when a run's feeds could not be
 * published), and both in `snapshot.sqlite`. The three are written into a fresh directory that
 * replaces the published one in one atomic step (see feeds-dir.ts); only then is `run` recorded as
 * published (`options.record`). A failure at any point leaves the previous feeds, and the record of
 * them, as they were. `reader` is only read: a connection of its own, so that a long write does not
 * keep the connection the caller writes with busy.
 */
export async function writeFeeds(
  reader: Store,
  paths: ShopPaths,
  run: number,
  options: FeedOptions,
): Promise<void> {
  const shop = path.basename(paths.dir);
  const summary = getRun(reader, run);
  if (summary?.status !== 'complete') {
    throw new StoreError(
      `Cannot write the feeds of shop ${shop} from run ${run}: it is not a complete run.`,
      reader.path,
    );
  }
  const current = await inspectFeedsPath(paths);
  // runSync holds the shop's lease: no other writer of these feeds is alive.
  await removeOldFeedDirs(paths, FEED_NAMES);
  const published = publishedRun(reader);
  const dir = await createFeedsDir(paths, run);
  let contents: RunContents;
  let reused: boolean;
  try {
    contents = runContents(reader, shop, summary, changesFrom(reader, run, published));
    const target = { paths, dir, store: reader.path, options };
    reused = await fillFeedsDir(contents, target, current, published);
    await fsyncPath(dir);
    await switchFeeds(paths, current, dir);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  options.onPoint?.('feeds-renamed');
  try {
    options.record();
  } catch (error) {
    throw storeError(`Cannot record the published feeds in store ${reader.path}`, reader.path, error);
  }
  options.onPoint?.('published');
  await removeOldFeedDirs(paths, FEED_NAMES);
  options.log.info(
    { run, previousRun: contents.previousRun, feeds: paths.feedsDir, gzip: options.gzip, reused },
    'feeds written',
  );
}

/** The run the changes feed counts from: the published run while it is an older complete run. */
function changesFrom(store: Store, run: number, published: number | null): number | null {
  if (published !== null && published < run && getRun(store, published)?.status === 'complete') {
    return published;
  }
  return previousCompleteRun(store, run);
}

/** Where the new feeds are written, from which store, and how. */
interface FeedsTarget {
  readonly paths: ShopPaths;
  readonly dir: string;
  readonly store: string;
  readonly options: FeedOptions;
}

/**
 * Writes the three feeds into `target.dir`. When the published snapshot is that of the run the
 * changes count from, the new one is a copy of it with the changes applied, and the published
 * inventory CSV is shared when nothing changed or spliced with the changes when it is plain CSV.
 * Otherwise the feeds are built from the store. Returns whether the published feeds were the start.
 */
async function fillFeedsDir(
  contents: RunContents,
  target: FeedsTarget,
  current: FeedsPath,
  published: number | null,
): Promise<boolean> {
  const old = (name: string) => path.join(target.paths.feedsDir, name);
  const snapshot = path.join(target.dir, SNAPSHOT);
  // The published directory may hold a later run than the record says (a crash between the switch
  // and the record): its own snapshot's `meta.run` says which run its files are.
  const fromPublished =
    current.kind !== 'none' &&
    published !== null &&
    contents.previousRun === published &&
    (await exists(old(SNAPSHOT))) &&
    isSnapshotOf(old(SNAPSHOT), published);
  if (!fromPublished) {
    await writeFeedFiles(contents, target, () => buildSnapshotSqlite(snapshot, target.store, contents));
    return false;
  }
  const update = async () => {
    await copyFile(old(SNAPSHOT), snapshot);
    return updateSnapshotSqlite(snapshot, target.store, contents);
  };
  await writeFeedFiles(contents, target, update, await fromPublishedInventory(contents, target, old));
  return true;
}

/** Writes the new directory's inventory CSV from the published feeds, given the new snapshot. */
type InventoryWriter = (snapshot: SnapshotSqlite) => Promise<void>;

/**
 * How the published inventory CSV (`old(name)`) makes the new one: shared when nothing changed,
 * spliced with the changes when it is plain CSV; undefined when the new one is written in full.
 */
async function fromPublishedInventory(
  contents: RunContents,
  target: FeedsTarget,
  old: (name: string) => string,
): Promise<InventoryWriter | undefined> {
  const name = inventoryName(target.options.gzip);
  if (!(await exists(old(name)))) return undefined;
  if (isEmpty(contents.changes)) return () => reuseFile(target.paths, old(name), path.join(target.dir, name));
  if (target.options.gzip) return undefined;
  return splicedInventory(target, { csv: old(name), snapshot: old(SNAPSHOT) }, contents);
}

const inventoryName = (gzip: boolean) => (gzip ? 'inventory.csv.gz' : 'inventory.csv');

/**
 * `inventory.csv` spliced from the published one with the changes; written in full instead when the
 * published file is not what its snapshot holds (changed by hand, or by another version's writer).
 */
function splicedInventory(
  target: FeedsTarget,
  published: PublishedInventory,
  contents: RunContents,
): InventoryWriter {
  const name = inventoryName(false);
  return (snapshot) =>
    inFeed(target.paths, name, async () => {
      const file = path.join(target.dir, name);
      try {
        await streamInto(file, (out) => spliceInventoryCsv(snapshot.db, snapshot.items, published, out));
      } catch (error) {
        if (!(error instanceof UnlikeSnapshot)) throw error;
        target.options.log.warn(
          { feed: path.join(target.paths.feedsDir, name), reason: error.message },
          'the published inventory.csv is not what its snapshot holds: written in full',
        );
        await rm(file);
        await streamInto(file, (out) =>
          writeInventoryCsv(snapshot.db, snapshot.items, contents.run.run, out),
        );
      }
      await fsyncPath(file);
    });
}

/**
 * Writes the three feeds: the snapshot (`open`), then its items as the inventory CSV (`inventory`
 * writes it from the published one when given), and the changes CSV.
 */
async function writeFeedFiles(
  contents: RunContents,
  target: FeedsTarget,
  open: () => Promise<SnapshotSqlite>,
  inventory?: InventoryWriter,
): Promise<void> {
  const { gzip, onPoint } = target.options;
  const feed = (name: string, write: StreamWriter) =>
    writeFeedFile(target, gzip ? `${name}.gz` : name, gzip ? gzipped(write) : write);
  const point = () => onPoint?.('feed-prepared');
  const file = path.join(target.dir, SNAPSHOT);
  await inFeed(target.paths, SNAPSHOT, async () => {
    const snapshot = await open();
    try {
      const { db, items } = snapshot;
      await (inventory?.(snapshot) ??
        feed('inventory.csv', (out) => writeInventoryCsv(db, items, contents.run.run, out)));
      point();
      await feed('changes.csv', (out) => writeChangesCsv(contents.changes, out));
      point();
    } finally {
      snapshot.close();
    }
    await fsyncPath(file);
  });
  point();
}

/** Streams one feed file into the new directory and flushes it. */
async function writeFeedFile(target: FeedsTarget, name: string, write: StreamWriter): Promise<void> {
  await inFeed(target.paths, name, async () => {
    const file = path.join(target.dir, name);
    await streamInto(file, write);
    await fsyncPath(file);
  });
}

/** Runs `work` on feed `name`; a failure names the feed as readers know it. */
async function inFeed(paths: ShopPaths, name: string, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (error instanceof ShopSyncError) throw error;
    const file = path.join(paths.feedsDir, name);
    throw new StoreError(`Cannot write feed ${file}: ${describeCause(error)}`, file, false, { cause: error });
  }
}

/** Feeds are never modified once published, so the new directory can share the old file. */
async function reuseFile(paths: ShopPaths, from: string, to: string): Promise<void> {
  await inFeed(paths, path.basename(to), async () => {
    try {
      await link(from, to);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw error;
      await copyFile(from, to);
      await fsyncPath(to);
    }
  });
}

function isEmpty<T>(list: Iterable<T>): boolean {
  // Leaving the loop closes the iterator and with it the statement behind it.
  for (const _ of list) return false;
  return true;
}

async function exists(file: string): Promise<boolean> {
  const found = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  return found?.isFile() ?? false;
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
