import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitRun } from '../../src/store/commit.js';
import { diffRuns } from '../../src/store/diff-runs.js';
import { ITEM_COLUMNS, itemHash, rowToItem } from '../../src/store/item-row.js';
import { replayMigrations, SCHEMA_VERSION } from '../../src/store/migrations.js';
import { createStoreFile } from '../../src/store/new-store.js';
import { openStore } from '../../src/store/open.js';
import { ReadBodies } from '../../src/store/read-bodies.js';
import {
  beginRun,
  discardRunData,
  discardUnfinishedRuns,
  getRun,
  listRuns,
} from '../../src/store/run-records.js';
import { SentVersions } from '../../src/store/sent-index.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { stagePages } from '../../src/store/staging.js';
import { tempDir } from './fixtures.js';

let temp: ReturnType<typeof tempDir>;
beforeEach(() => {
  temp = tempDir();
});
afterEach(() => temp.cleanup());

/** Every earlier schema version, as that version of shop-sync wrote a store (SQL kept under fixtures/). */
const EARLIER_VERSIONS = Array.from({ length: SCHEMA_VERSION - 1 }, (_, index) => index + 1);

/** A store file exactly as schema version `version` left it. */
function storeOfVersion(version: number): string {
  const file = path.join(temp.dir, 'inventory.sqlite');
  const sql = readFileSync(new URL(`./fixtures/schema-v${version}.sql`, import.meta.url), 'utf8');
  const db = new Database(file);
  db.exec(sql);
  db.close();
  return file;
}

const snapshot = (store: ReturnType<typeof openStore>, run: number) =>
  [...snapshotItems(store, run)].map((item) => [item.id, item.quantity, item.title]);

/** The store's view for readers, as a reader queries it. */
const currentItems = (store: ReturnType<typeof openStore>) =>
  store.db
    .prepare('SELECT run, id, quantity, title, price, price_text FROM current_items ORDER BY id')
    .raw()
    .all() as unknown[][];

describe.each(EARLIER_VERSIONS)('a store written by schema version %i', (version) => {
  it('is upgraded in place with its runs, snapshots and diffs intact', () => {
    const store = openStore(storeOfVersion(version));
    expect(store.db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(listRuns(store).map((r) => [r.run, r.status, r.error])).toEqual([
      [1, 'complete', null],
      [2, 'complete', null],
      [3, 'failed', 'interrupted'],
    ]);
    expect(snapshot(store, 1)).toEqual([
      ['a', 1, 'Item a'],
      ['b', 1, 'Item b'],
    ]);
    expect(snapshot(store, 2)).toEqual([
      ['a', 2, 'Item a'],
      ['c', 1, 'Item c'],
    ]);
    expect([...diffRuns(store, 1, 2)].map((c) => [c.change, c.id])).toEqual([
      ['updated', 'a'],
      ['removed', 'b'],
      ['added', 'c'],
    ]);
    expect(store.db.prepare('SELECT raw FROM item_versions WHERE id = ?').pluck().get('b')).toBe(
      '{"id":"b","extra_field":"kept"}',
    );
    // Run 3 is unfinished and wrote versions (c's second, d): the view shows run 2's items, prices as REAL.
    expect(currentItems(store)).toEqual([
      [2, 'a', 2, 'Item a', 10.5, '10.50'],
      [2, 'c', 1, 'Item c', 10.5, '10.50'],
    ]);
    store.close();
  });

  it('keeps hashes that the items read again with the same values match', () => {
    const store = openStore(storeOfVersion(version));
    const rows = store.db
      .prepare(`SELECT ${ITEM_COLUMNS.join(', ')} FROM item_versions`)
      .raw()
      .all() as unknown[][];
    expect(rows).toHaveLength(6);
    for (const row of rows) expect(row[ITEM_COLUMNS.indexOf('hash')]).toBe(itemHash(rowToItem(row)));
    store.close();
  });

  it('resumes the interrupted run after its checkpoint, keeping what it read, and commits it', () => {
    const store = openStore(storeOfVersion(version));
    const start = beginRun(store, {
      query: 'test',
      resumeWindowMinutes: 60,
      now: new Date('2026-11-23T00:10:00.000Z'),
    });
    expect(start).toEqual({ run: 3, startPage: 2, resumed: true });
    expect(commitRun(store, 3, () => undefined)).toEqual({
      pages: 1,
      items: 3,
      added: 1,
      updated: 1,
      removed: 0,
      invalid: 0,
    });
    expect(snapshot(store, 3)).toEqual([
      ['a', 2, 'Item a'],
      ['c', 1, 'Item c v2'],
      ['d', 1, 'Item d'],
    ]);
    expect(snapshot(store, 2).map(([id]) => id)).toEqual(['a', 'c']);
    expect(getRun(store, 3)?.status).toBe('complete');
    expect(currentItems(store).map(([run, id, , title]) => [run, id, title])).toEqual([
      [3, 'a', 'Item a'],
      [3, 'c', 'Item c v2'],
      [3, 'd', 'Item d'],
    ]);
    store.close();
  });
});

describe.each([9, 10, 11, 12])('a store written by schema version %i', (version) => {
  it('forgets the hashes of the texts its items were read from, and its listing bodies: they are of bytes now', async () => {
    const store = openStore(storeOfVersion(version));
    const { run } = beginRun(store, {
      query: 'test',
      resumeWindowMinutes: 0,
      now: new Date('2026-11-23T00:10:00.000Z'),
    });
    await discardUnfinishedRuns(store, run);
    expect(new ReadBodies(store).elementsOf('page-1')).toBeUndefined();
    expect(
      new SentVersions(store, run).versionsOf([
        { id: 'a', sent: 11 },
        { id: 'c', sent: 12 },
      ]),
    ).toEqual([undefined, undefined]);
    // Read again in full with the same values, an item is unchanged and learns its bytes' hash.
    const row = store.db
      .prepare(`SELECT ${ITEM_COLUMNS.join(', ')} FROM item_versions WHERE id = 'a' AND valid_to_run IS NULL`)
      .raw()
      .get() as unknown[];
    const items = [rowToItem(row)];
    stagePages(store, run, [{ page: 1, items, invalid: [], sent: [21] }], () => undefined, {});
    commitRun(store, run, () => undefined);
    const [a] = new SentVersions(store, run + 1).versionsOf([{ id: 'a', sent: 21 }]);
    expect(a?.version).toBe(3);
    store.close();
  });
});

describe('a store written by schema version 13', () => {
  it('keeps the run that received each listing body beside it, and drops the body once a run did not', async () => {
    const store = openStore(storeOfVersion(13));
    const received = () =>
      store.db
        .prepare('SELECT digest, run FROM listing_body_runs JOIN listing_bodies USING (body)')
        .raw()
        .all();
    const runRows = () => store.db.prepare('SELECT count(*) FROM listing_body_runs').pluck().get();
    expect(received()).toEqual([['page-1', 2]]);
    const columns = store.db.prepare("SELECT name FROM pragma_table_info('listing_bodies')").pluck().all();
    expect(columns).not.toContain('run');
    const { run } = beginRun(store, {
      query: 'test',
      resumeWindowMinutes: 0,
      now: new Date('2026-11-23T00:10:00.000Z'),
    });
    await discardUnfinishedRuns(store, run);
    stagePages(store, run, [{ page: 1, items: [], invalid: [] }], () => undefined, {});
    commitRun(store, run, () => undefined);
    await discardRunData(store, run, { complete: true });
    expect(store.db.prepare('SELECT count(*) FROM listing_bodies').pluck().get()).toBe(0);
    expect(runRows()).toBe(0);
    store.close();
  });
});

/** What a schema is made of, as SQLite keeps it, in a comparable order, and its version. */
function schemaOf(db: Database.Database): { objects: unknown[]; version: unknown } {
  return {
    objects: db
      .prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name')
      .raw()
      .all(),
    version: db.pragma('user_version', { simple: true }),
  };
}

describe('a new store', () => {
  const replayedSchema = () => {
    const replayed = new Database(path.join(temp.dir, 'replayed.sqlite'));
    replayMigrations(replayed);
    const schema = schemaOf(replayed);
    replayed.close();
    return schema;
  };

  it('is created by openStore in one step with exactly the schema that every migration replayed leaves', () => {
    const store = openStore(path.join(temp.dir, 'new', 'inventory.sqlite'));
    const created = schemaOf(store.db);
    expect(created.version).toBe(SCHEMA_VERSION);
    expect(created.objects.length).toBeGreaterThan(10);
    expect(created).toEqual(replayedSchema());
    store.close();
  });

  it('is written whole by createStoreFile, in WAL mode, with that same schema and nothing left beside it', async () => {
    const file = path.join(temp.dir, 'new', 'inventory.sqlite');
    await createStoreFile(file);
    expect(readdirSync(path.dirname(file))).toEqual(['inventory.sqlite']);
    const store = openStore(file);
    expect(schemaOf(store.db)).toEqual(replayedSchema());
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('integrity_check', { simple: true })).toBe('ok');
    const { run } = beginRun(store, { query: 'test', resumeWindowMinutes: 0, now: new Date() });
    store.close();
    // Its WAL is gone once closed, and what was written is in the file.
    expect(readdirSync(path.dirname(file))).toEqual(['inventory.sqlite']);
    const again = openStore(file);
    expect(listRuns(again).map((r) => [r.run, r.status])).toEqual([[run, 'running']]);
    again.close();
  });

  it('is not written over a store another process created meanwhile', async () => {
    const file = path.join(temp.dir, 'inventory.sqlite');
    const first = openStore(file);
    const { run } = beginRun(first, { query: 'test', resumeWindowMinutes: 0, now: new Date() });
    first.close();
    await createStoreFile(file);
    const store = openStore(file);
    expect(listRuns(store).map((r) => [r.run, r.status])).toEqual([[run, 'running']]);
    store.close();
    expect(readdirSync(temp.dir)).toEqual(['inventory.sqlite']);
  });
});
