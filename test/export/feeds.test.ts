import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppConfig } from '../../src/config.js';
import { findShop } from '../../src/config.js';
import { diffRuns } from '../../src/diff.js';
import { StoreError } from '../../src/errors.js';
import { writeFeeds } from '../../src/export/feeds.js';
import { silentLogger } from '../../src/log.js';
import { type SimItem, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/open.js';
import { type ShopPaths, shopPaths } from '../../src/store/paths.js';
import { runSync } from '../../src/sync.js';
import {
  commitItems,
  makeItem,
  openTempStore,
  simConfig,
  sortedTruth,
  tempDir,
  truthById,
} from '../store/fixtures.js';
import { CHANGES_HEADER, changeRecord, inventoryRecord } from './expected.js';
import { querySqlite, readCsv, readCsvRecords } from './python.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let config: AppConfig;
let paths: ShopPaths;

beforeAll(async () => {
  sim = await startSimulator({ items: 150, seed: 11 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-feeds-');
  config = simConfig(sim, temp.dir);
  paths = shopPaths(config.dataDir, 'shop');
});
afterEach(() => temp.cleanup());

const sync = (extra: Partial<AppConfig> = {}) =>
  runSync(findShop(config, 'shop'), { config: { ...config, ...extra }, log: silentLogger() });

/** Items as `snapshot.sqlite` stores them: booleans 0/1, lists as JSON. */
function asSnapshotRow(item: SimItem): Record<string, unknown> {
  return {
    ...item,
    published: item.published ? 1 : 0,
    photos: JSON.stringify(item.photos),
    photos_id: JSON.stringify(item.photos_id),
  };
}

/** The store's own diff of two runs, as the contract's changes.csv records. */
function storeChanges(from: number, to: number) {
  const store = openStore(paths.store);
  try {
    return [...diffRuns(store, from, to)];
  } finally {
    store.close();
  }
}

describe('writeFeeds after each complete sync', () => {
  it('writes the snapshot as CSV and SQLite, and an empty changes feed after the first run', async () => {
    await sync();

    expect(readCsvRecords(paths.inventoryCsv)).toEqual(truthById(sim).map(inventoryRecord));
    expect(readCsv(paths.changesCsv)).toEqual([CHANGES_HEADER.split(',')]);
    expect(querySqlite(paths.snapshotSqlite, 'SELECT * FROM items ORDER BY id')).toEqual(
      truthById(sim).map(asSnapshotRow),
    );
    expect(querySqlite(paths.snapshotSqlite, 'SELECT * FROM changes')).toEqual([]);
    expect(
      querySqlite(paths.snapshotSqlite, 'SELECT run, shop, items, added, previous_run FROM run'),
    ).toEqual([{ run: 1, shop: 'shop', items: 150, added: 150, previous_run: null }]);
    expect(readdirSync(paths.feedsDir).sort()).toEqual(['changes.csv', 'inventory.csv', 'snapshot.sqlite']);
  });

  it('writes exactly the mutation as changes after the next run', async () => {
    await sync();
    const truth = sortedTruth(
      sim.mutate({ prices: 3, quantities: 3, publish: 2, titles: 3, add: 2, remove: 2 }),
    );
    await sync();

    const records = readCsvRecords(paths.changesCsv);
    expect(records.filter((r) => r.change === 'added').map((r) => r.id)).toEqual(truth.added);
    expect(records.filter((r) => r.change === 'removed').map((r) => r.id)).toEqual(truth.removed);
    expect(
      records
        .filter((r) => r.change === 'updated')
        .map((r) => ({ id: r.id, fields: (r.changed_fields ?? '').split('|') })),
    ).toEqual(truth.updated.map((u) => ({ id: u.id, fields: Object.keys(u.fields) })));
    expect(records).toEqual(storeChanges(1, 2).map(changeRecord));
    expect(readCsvRecords(paths.inventoryCsv)).toEqual(truthById(sim).map(inventoryRecord));

    const sqliteChanges = querySqlite(
      paths.snapshotSqlite,
      'SELECT change, id, changed_fields FROM changes ORDER BY id',
    );
    expect(sqliteChanges).toEqual(
      records.map((r) => ({ change: r.change, id: r.id, changed_fields: r.changed_fields })),
    );
    expect(querySqlite(paths.snapshotSqlite, 'SELECT run, previous_run FROM run')).toEqual([
      { run: 2, previous_run: 1 },
    ]);
  });

  it('writes gzipped CSV feeds when asked and removes the stale plain ones, and back', async () => {
    await sync();
    await sync({ feedsGzip: true });
    expect(readdirSync(paths.feedsDir).sort()).toEqual([
      'changes.csv.gz',
      'inventory.csv.gz',
      'snapshot.sqlite',
    ]);
    expect(readCsvRecords(`${paths.inventoryCsv}.gz`)).toEqual(truthById(sim).map(inventoryRecord));
    expect(readCsv(`${paths.changesCsv}.gz`)).toEqual([CHANGES_HEADER.split(',')]);

    await sync({ feedsGzip: false });
    expect(readdirSync(paths.feedsDir).sort()).toEqual(['changes.csv', 'inventory.csv', 'snapshot.sqlite']);
  });

  it('leaves every previous feed intact when one of them cannot be replaced', async () => {
    await sync();
    const before = {
      inventory: readFileSync(paths.inventoryCsv),
      snapshot: readFileSync(paths.snapshotSqlite),
    };
    sim.mutate({ prices: 5, add: 1 });
    rmSync(paths.changesCsv);
    mkdirSync(paths.changesCsv);

    const error = await sync().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toBe(
      `Cannot write feed ${paths.changesCsv}: EISDIR illegal operation on a directory`,
    );
    expect(readFileSync(paths.inventoryCsv)).toEqual(before.inventory);
    expect(readFileSync(paths.snapshotSqlite)).toEqual(before.snapshot);
    expect(readdirSync(paths.feedsDir).sort()).toEqual(['changes.csv', 'inventory.csv', 'snapshot.sqlite']);
  });

  it('removes temporary files that a killed writer left beside the feeds', async () => {
    await sync();
    const leftovers = ['.inventory.csv.4242.0badf00d.tmp', '.snapshot.sqlite.4242.0badf00d.tmp'];
    for (const name of leftovers) writeFileSync(path.join(paths.feedsDir, name), 'half a feed');
    writeFileSync(path.join(paths.feedsDir, 'notes.txt'), 'not ours');

    await sync();
    expect(readdirSync(paths.feedsDir).sort()).toEqual([
      'changes.csv',
      'inventory.csv',
      'notes.txt',
      'snapshot.sqlite',
    ]);
  });

  it('leaves the store connection free for the sync while it streams a large snapshot', async () => {
    const store = openTempStore(temp.dir);
    try {
      const items = Array.from({ length: 3000 }, (_, n) => makeItem(`item-${String(n).padStart(5, '0')}`));
      const run = await commitItems(store, [items]);
      let queries = 0;
      let done = false;
      const writing = writeFeeds(store, paths, run, { gzip: false, log: silentLogger() }).finally(() => {
        done = true;
      });
      // A write, like the lease renewal the sync does meanwhile: it must never find the connection busy.
      const renew = store.db.prepare('UPDATE runs SET heartbeat_at = heartbeat_at WHERE run = ?');
      while (!done) {
        renew.run(run);
        queries += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
      await writing;
      expect(queries).toBeGreaterThan(1);
      expect(readCsvRecords(paths.inventoryCsv)).toHaveLength(3000);
    } finally {
      store.close();
    }
  });

  it('refuses to write feeds from a run that is not complete', async () => {
    await sync();
    const store = openStore(paths.store);
    try {
      await expect(writeFeeds(store, paths, 7, { gzip: false, log: silentLogger() })).rejects.toThrow(
        'Cannot write the feeds of shop shop from run 7: it is not a complete run.',
      );
    } finally {
      store.close();
    }
    expect(existsSync(paths.inventoryCsv)).toBe(true);
  });
});
