import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { commitRun } from '../../src/store/commit.js';
import { openStore } from '../../src/store/open.js';
import { beginRun, listRuns } from '../../src/store/runs.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { stagePages } from '../../src/store/staging.js';
import { commitItems, makeItem, tempDir } from './fixtures.js';

let temp: ReturnType<typeof tempDir>;
beforeEach(() => {
  temp = tempDir();
});
afterEach(() => temp.cleanup());

describe('openStore', () => {
  it('creates the directories and file, in WAL mode, at the current schema version', () => {
    const file = path.join(temp.dir, 'a', 'b', 'inventory.sqlite');
    const store = openStore(file);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('user_version', { simple: true })).toBe(3);
    store.close();
    const again = openStore(file);
    expect(listRuns(again)).toEqual([]);
    again.close();
  });

  it('is readable by the sqlite3 command while a connection holds it open', () => {
    const file = path.join(temp.dir, 'inventory.sqlite');
    const store = openStore(file);
    commitItems(store, [[makeItem('a'), makeItem('b')]]);
    const out = execFileSync('python3', [
      '-c',
      'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("select count(*) from item_versions").fetchone()[0])',
      file,
    ]);
    expect(out.toString().trim()).toBe('2');
    store.close();
  });

  it('names the file when it is not a database, and leaves it as it was', () => {
    const file = path.join(temp.dir, 'inventory.sqlite');
    writeFileSync(
      file,
      'this is not sqlite, just text that happens to be long enough to look like a header....',
    );
    const error = captureError(() => openStore(file));
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toBe(`Cannot open store ${file}: file is not a database.`);
    expect(readFileSync(file, 'utf8')).toMatch(/^this is not sqlite/);
  });

  it('names the file when its place is taken by a directory', () => {
    const file = path.join(temp.dir, 'inventory.sqlite');
    mkdirSync(file);
    expect(() => openStore(file)).toThrow(new RegExp(`^Cannot open store ${file}: .+\\.$`));
  });

  it('upgrades a version-1 store in place: an interrupted run keeps its staged items and completes', () => {
    const file = path.join(temp.dir, 'inventory.sqlite');
    const old = openStore(file);
    const { run } = beginRun(old, { query: 'test', resumeWindowMinutes: 0 });
    stagePages(
      old,
      run,
      [{ page: 1, items: [makeItem('a', { quantity: 7 })], invalid: [] }],
      () => undefined,
    );
    // Version 1 required every item column of a staged row.
    old.db.exec(`
      CREATE TABLE staged_v1 AS SELECT * FROM staged_items;
      DROP TABLE staged_items;
      CREATE TABLE staged_items (run INTEGER NOT NULL REFERENCES runs (run) ON DELETE CASCADE,
        id TEXT NOT NULL, page INTEGER NOT NULL, hash TEXT NOT NULL, ${V1_ITEM_COLUMNS},
        PRIMARY KEY (run, id));
      INSERT INTO staged_items SELECT * FROM staged_v1;
      DROP TABLE staged_v1;
      DROP TABLE published;
      PRAGMA user_version = 1;`);
    old.close();

    const store = openStore(file);
    expect(store.db.pragma('user_version', { simple: true })).toBe(3);
    const nullable = store.db
      .prepare(
        "SELECT count(*) FROM pragma_table_info('staged_items') WHERE name = 'raw' AND \"notnull\" = 0",
      )
      .pluck()
      .get();
    expect(nullable).toBe(1);
    commitRun(store, run, () => undefined);
    expect([...snapshotItems(store, run)]).toEqual([makeItem('a', { quantity: 7 })]);
    store.close();
  });

  it('refuses a store written by a newer version instead of guessing', () => {
    const file = path.join(temp.dir, 'inventory.sqlite');
    const store = openStore(file);
    store.db.pragma('user_version = 99');
    store.close();
    expect(() => openStore(file)).toThrow(
      /its schema version 99 is newer than this shop-sync understands \(3\)/,
    );
  });
});

function captureError(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}

const V1_ITEM_COLUMNS = `title TEXT NOT NULL, price TEXT NOT NULL, original_price TEXT, currency TEXT,
  quantity INTEGER NOT NULL, published INTEGER NOT NULL, created_at TEXT NOT NULL, url TEXT NOT NULL,
  web_url TEXT, photos TEXT NOT NULL, photos_id TEXT NOT NULL, description TEXT, raw_description TEXT,
  fbcomments TEXT, shop_id TEXT NOT NULL, shop_name TEXT NOT NULL, shop_url TEXT NOT NULL,
  shop_image TEXT, shop_items_url TEXT NOT NULL, raw TEXT NOT NULL`;
