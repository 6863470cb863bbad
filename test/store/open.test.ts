import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { SCHEMA_VERSION } from '../../src/store/migrations.js';
import { openStore } from '../../src/store/open.js';
import { listRuns } from '../../src/store/runs.js';
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
    expect(store.db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
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
