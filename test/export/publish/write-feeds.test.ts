import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppConfig } from '../../../src/config/app-config.js';
import { findShop } from '../../../src/config/app-config.js';
import { StoreError } from '../../../src/errors.js';
import { createLogger, silentLogger } from '../../../src/log.js';
import { type SimItem, type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { diffRuns } from '../../../src/store/diff-runs.js';
import { openStore } from '../../../src/store/open.js';
import { type ShopPaths, shopPaths } from '../../../src/store/paths.js';
import { feedsLag } from '../../../src/store/published.js';
import { publishFeeds, runSync, type SyncPoint } from '../../../src/sync/index.js';
import {
  commitItems,
  makeItem,
  openTempStore,
  simConfig,
  sortedTruth,
  tempDir,
  truthById,
} from '../../store/fixtures.js';
import { CHANGES_HEADER, changeRecord, inventoryRecord } from '../expected.js';
import { querySqlite, readCsv, readCsvRecords } from '../python.js';

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

const sync = (extra: Partial<AppConfig> = {}, onPoint?: (point: SyncPoint) => void) =>
  runSync(findShop(config, 'shop'), { config: { ...config, ...extra }, log: silentLogger(), onPoint });

function lag() {
  const store = openStore(paths.store);
  try {
    return feedsLag(store);
  } finally {
    store.close();
  }
}

const feedBytes = () =>
  [paths.inventoryCsv, paths.changesCsv, paths.snapshotSqlite].map((file) => readFileSync(file));

/** Items as `snapshot.sqlite` stores them: booleans 0/1, lists as JSON, the shop's details apart. */
function asSnapshotRow(item: SimItem): Record<string, unknown> {
  const { shop_name: _name, shop_url: _url, shop_image: _image, shop_items_url: _items, ...own } = item;
  return {
    ...own,
    price: Number(item.price),
    price_text: item.price,
    original_price: item.original_price === null ? null : Number(item.original_price),
    original_price_text: item.original_price,
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
    const shops = new Map(
      truthById(sim).map((i) => [
        i.shop_id,
        {
          shop_id: i.shop_id,
          shop_name: i.shop_name,
          shop_url: i.shop_url,
          shop_image: i.shop_image,
          shop_items_url: i.shop_items_url,
        },
      ]),
    );
    expect(querySqlite(paths.snapshotSqlite, 'SELECT * FROM shops')).toEqual([...shops.values()]);
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
    const gzipped = statSync(`${paths.inventoryCsv}.gz`).ino;
    await sync({ feedsGzip: true });
    expect(statSync(`${paths.inventoryCsv}.gz`).ino).toBe(gzipped);
    expect(readCsvRecords(`${paths.inventoryCsv}.gz`)).toEqual(truthById(sim).map(inventoryRecord));
    expect(readCsv(`${paths.changesCsv}.gz`)).toEqual([CHANGES_HEADER.split(',')]);

    await sync({ feedsGzip: false });
    expect(readdirSync(paths.feedsDir).sort()).toEqual(['changes.csv', 'inventory.csv', 'snapshot.sqlite']);
  });

  it('refuses a feeds path that is a file, saying so, and leaves it and the store as they were', async () => {
    await sync();
    rmSync(paths.feedsDir, { recursive: true });
    writeFileSync(paths.feedsDir, 'not a directory');

    const error = await sync().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toBe(
      `Cannot write the feeds of shop shop: ${paths.feedsDir} is a file where a directory is needed.`,
    );
    expect(readFileSync(paths.feedsDir, 'utf8')).toBe('not a directory');
    expect(lag()).toEqual({ published: 1, latestComplete: 2, lagging: true });
  });

  it('covers the changes of a run whose feeds failed in the next changes feed', async () => {
    await sync();
    const first = sortedTruth(sim.mutate({ prices: 3, add: 2, remove: 1 }));
    rmSync(paths.feedsDir);
    writeFileSync(paths.feedsDir, 'in the way');
    await expect(sync()).rejects.toThrow('is a file where a directory is needed');
    expect(lag()).toEqual({ published: 1, latestComplete: 2, lagging: true });

    rmSync(paths.feedsDir);
    const second = sortedTruth(sim.mutate({ quantities: 3, add: 1 }));
    await sync();

    expect(lag()).toEqual({ published: 3, latestComplete: 3, lagging: false });
    const records = readCsvRecords(paths.changesCsv);
    expect(records).toEqual(storeChanges(1, 3).map(changeRecord));
    const ids = (kind: string) => records.filter((r) => r.change === kind).map((r) => r.id);
    expect(ids('added')).toEqual([...first.added, ...second.added].sort());
    expect(ids('removed')).toEqual(first.removed);
    for (const id of [...first.updated, ...second.updated].map((u) => u.id)) {
      expect(records.find((r) => r.id === id)?.change).toBe('updated');
    }
    expect(querySqlite(paths.snapshotSqlite, 'SELECT run, previous_run FROM meta')).toEqual([
      { run: 3, previous_run: 1 },
    ]);
  });

  it('keeps all three previous feeds when the process stops before the switch', async () => {
    await sync();
    const before = feedBytes();
    sim.mutate({ prices: 5, add: 1 });
    const stop = (point: SyncPoint) => {
      if (point === 'feed-prepared') throw new Error('killed');
    };
    await expect(sync({}, stop)).rejects.toThrow('killed');

    expect(feedBytes()).toEqual(before);
    expect(lag()).toEqual({ published: 1, latestComplete: 2, lagging: true });
    await sync();
    expect(readdirSync(paths.dir).filter((name) => name.startsWith('.feeds'))).toHaveLength(1);
    expect(readCsvRecords(paths.changesCsv)).toEqual(storeChanges(1, 3).map(changeRecord));
  });

  it('reports each point of publishing in order, the record last', async () => {
    await sync();
    const points: SyncPoint[] = [];
    await sync({}, (point) => {
      points.push(point);
      if (point === 'feeds-renamed') {
        expect(querySqlite(paths.snapshotSqlite, 'SELECT run FROM meta')).toEqual([{ run: 2 }]);
        expect(lag().published).toBe(1);
      }
    });
    expect(points.filter((p) => ['feed-prepared', 'feeds-renamed', 'published'].includes(p))).toEqual([
      'feed-prepared',
      'feed-prepared',
      'feed-prepared',
      'feeds-renamed',
      'published',
    ]);
  });

  it('publishes feeds as a link to one directory and removes what killed writers left', async () => {
    await sync();
    const killed = path.join(paths.dir, '.feeds-9-0badf00d');
    mkdirSync(killed);
    writeFileSync(path.join(killed, 'inventory.csv'), 'half a feed');
    writeFileSync(path.join(paths.dir, '.feeds-link-0badf00d.tmp'), '');

    await sync();
    expect(lstatSync(paths.feedsDir).isSymbolicLink()).toBe(true);
    const dirs = readdirSync(paths.dir).filter((name) => name.startsWith('.feeds'));
    expect(dirs).toEqual([readlinkSync(paths.feedsDir)]);
    expect(readdirSync(paths.feedsDir).sort()).toEqual(['changes.csv', 'inventory.csv', 'snapshot.sqlite']);
  });

  it('upgrades a feeds directory of an earlier version in place, keeping files that are not feeds', async () => {
    mkdirSync(paths.feedsDir, { recursive: true });
    for (const name of ['inventory.csv', 'changes.csv', 'snapshot.sqlite', '.inventory.csv.42.0badf00d.tmp'])
      writeFileSync(path.join(paths.feedsDir, name), 'old feed');
    writeFileSync(path.join(paths.feedsDir, 'notes.txt'), 'not ours');

    await sync();
    expect(lstatSync(paths.feedsDir).isSymbolicLink()).toBe(true);
    expect(readCsvRecords(paths.inventoryCsv)).toEqual(truthById(sim).map(inventoryRecord));
    const legacy = readdirSync(paths.dir).filter((name) => name.startsWith('.feeds-legacy-'));
    expect(legacy).toHaveLength(1);
    expect(readdirSync(path.join(paths.dir, legacy[0] as string))).toEqual(['notes.txt']);
  });

  it('reuses the previous feed content when nothing changed, and rebuilds it when something did', async () => {
    await sync();
    const first = { csv: statSync(paths.inventoryCsv).ino, snapshot: readFileSync(paths.snapshotSqlite) };

    await sync();
    expect(statSync(paths.inventoryCsv).ino).toBe(first.csv);
    expect(readCsv(paths.changesCsv)).toEqual([CHANGES_HEADER.split(',')]);
    expect(querySqlite(paths.snapshotSqlite, 'SELECT run, previous_run FROM meta')).toEqual([
      { run: 2, previous_run: 1 },
    ]);
    expect(querySqlite(paths.snapshotSqlite, 'SELECT * FROM items ORDER BY id')).toEqual(
      truthById(sim).map(asSnapshotRow),
    );
    expect(readFileSync(paths.snapshotSqlite)).not.toEqual(first.snapshot);

    sim.mutate({ quantities: 1 });
    await sync();
    expect(statSync(paths.inventoryCsv).ino).not.toBe(first.csv);
    expect(readCsvRecords(paths.inventoryCsv)).toEqual(truthById(sim).map(inventoryRecord));
    const changed = statSync(paths.inventoryCsv).ino;

    await sync();
    expect(statSync(paths.inventoryCsv).ino).toBe(changed);
    expect(querySqlite(paths.snapshotSqlite, 'SELECT count(*) AS n FROM changes')).toEqual([{ n: 0 }]);
    expect(querySqlite(paths.snapshotSqlite, 'SELECT * FROM items ORDER BY id')).toEqual(
      truthById(sim).map(asSnapshotRow),
    );
  });

  /** The feeds of run `run` published afresh, from the store alone, in a directory of their own. */
  async function freshFeeds(run: number, gzip = false): Promise<ShopPaths> {
    const fresh = shopPaths(path.join(temp.dir, `fresh-${run}`), 'shop');
    mkdirSync(fresh.dir, { recursive: true });
    const store = openStore(paths.store);
    try {
      await publishFeeds(store, fresh, run, { gzip, log: silentLogger() });
    } finally {
      store.close();
    }
    return fresh;
  }

  /** Every table's rows of a snapshot.sqlite, in key order, without its time of writing. */
  const snapshotRows = (file: string) =>
    ['meta', 'run', 'items', 'shops', 'changes'].map((table) =>
      querySqlite(file, `SELECT * FROM ${table} ORDER BY 1`).map(({ generated_at: _, ...row }) => row),
    );

  it('writes, from the published feeds and the changes, the bytes and rows a write from the store writes', async () => {
    await sync();
    sim.mutate({ prices: 4, quantities: 3, publish: 2, titles: 3, add: 3, remove: 2 });
    await sync();
    const published = statSync(paths.snapshotSqlite);
    sim.mutate({ prices: 2, add: 1, remove: 1 });
    await sync();
    const fresh = await freshFeeds(3);
    expect(readFileSync(paths.inventoryCsv)).toEqual(readFileSync(fresh.inventoryCsv));
    expect(readFileSync(paths.changesCsv)).toEqual(readFileSync(fresh.changesCsv));
    expect(snapshotRows(paths.snapshotSqlite)).toEqual(snapshotRows(fresh.snapshotSqlite));
    expect(readCsvRecords(paths.inventoryCsv)).toEqual(truthById(sim).map(inventoryRecord));
    expect(statSync(paths.snapshotSqlite).size).toBeLessThanOrEqual(published.size + 4 * 16384);
  });

  it('writes inventory.csv whole, saying why, when the published one is not what its snapshot holds', async () => {
    const lines: string[] = [];
    const log = createLogger('warn', { write: (line: string) => lines.push(line) });
    await sync();
    const published = readFileSync(paths.inventoryCsv, 'utf8');
    const [header, first, ...rest] = published.split('\n');
    writeFileSync(paths.inventoryCsv, [header, ...rest].join('\n'));
    expect(first).toBeDefined();
    sim.mutate({ quantities: 2 });
    await runSync(findShop(config, 'shop'), { config, log });
    expect(readCsvRecords(paths.inventoryCsv)).toEqual(truthById(sim).map(inventoryRecord));
    expect(readFileSync(paths.inventoryCsv)).toEqual(readFileSync((await freshFeeds(2)).inventoryCsv));
    const warned = lines.map((line) => JSON.parse(line)).filter((line) => line.level === 40);
    expect(warned).toEqual([
      expect.objectContaining({
        msg: 'the published inventory.csv is not what its snapshot holds: written in full',
        feed: paths.inventoryCsv,
        reason: 'a record is not as written',
      }),
    ]);
  });

  it('writes gzipped feeds of a resync with changes whole, as a write from the store writes them', async () => {
    await sync({ feedsGzip: true });
    sim.mutate({ prices: 3, remove: 1 });
    await sync({ feedsGzip: true });
    const fresh = await freshFeeds(2, true);
    const unzipped = (file: string) => gunzipSync(readFileSync(`${file}.gz`));
    expect(unzipped(paths.inventoryCsv)).toEqual(unzipped(fresh.inventoryCsv));
    expect(snapshotRows(paths.snapshotSqlite)).toEqual(snapshotRows(fresh.snapshotSqlite));
  });

  it('does not reuse feeds that a crash left ahead of the record of them', async () => {
    const store = openTempStore(temp.dir);
    const feeds = (run: number, onPoint?: (point: string) => void) =>
      publishFeeds(store, paths, run, { gzip: false, log: silentLogger(), onPoint });
    try {
      const original = [makeItem('a'), makeItem('b')];
      await feeds(await commitItems(store, [original]));
      const second = await commitItems(store, [[makeItem('a', { quantity: 7 })]]);
      const crash = (point: string) => {
        if (point === 'feeds-renamed') throw new Error('killed');
      };
      await expect(feeds(second, crash)).rejects.toThrow('killed');
      expect(readCsvRecords(paths.inventoryCsv)).toHaveLength(1);

      // Back to the first run's items: nothing changed since the published run 1, but the feeds in
      // place are run 2's.
      const third = await commitItems(store, [original]);
      await feeds(third);
      expect(readCsvRecords(paths.inventoryCsv).map((r) => [r.id, r.quantity])).toEqual([
        ['a', '1'],
        ['b', '1'],
      ]);
      expect(querySqlite(paths.snapshotSqlite, 'SELECT run, previous_run FROM meta')).toEqual([
        { run: third, previous_run: 1 },
      ]);
      expect(querySqlite(paths.snapshotSqlite, 'SELECT id, quantity FROM items')).toEqual([
        { id: 'a', quantity: 1 },
        { id: 'b', quantity: 1 },
      ]);
    } finally {
      store.close();
    }
  });

  it('says so when the record of the published feeds cannot be written, the feeds being in place', async () => {
    const store = openTempStore(temp.dir);
    try {
      const run = await commitItems(store, [[makeItem('a')]]);
      const failRecord = (point: string) => {
        if (point === 'feeds-renamed') store.db.exec('ALTER TABLE published RENAME TO gone');
      };
      const error = await publishFeeds(store, paths, run, {
        gzip: false,
        log: silentLogger(),
        onPoint: failRecord,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).message).toBe(
        `Cannot record the published feeds in store ${store.path}: no such table: published.`,
      );
      expect(readCsvRecords(paths.inventoryCsv).map((r) => r.id)).toEqual(['a']);
      store.db.exec('ALTER TABLE gone RENAME TO published');
      expect(feedsLag(store)).toEqual({ published: null, latestComplete: run, lagging: true });
    } finally {
      store.close();
    }
  });

  it('leaves the store connection free for the sync while it streams a large snapshot', async () => {
    const store = openTempStore(temp.dir);
    try {
      const items = Array.from({ length: 3000 }, (_, n) => makeItem(`item-${String(n).padStart(5, '0')}`));
      const run = await commitItems(store, [items]);
      let queries = 0;
      let done = false;
      const writing = publishFeeds(store, paths, run, { gzip: false, log: silentLogger() }).finally(() => {
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
      await expect(publishFeeds(store, paths, 7, { gzip: false, log: silentLogger() })).rejects.toThrow(
        'Cannot write the feeds of shop shop from run 7: it is not a complete run.',
      );
    } finally {
      store.close();
    }
    expect(existsSync(paths.inventoryCsv)).toBe(true);
  });
});
