import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreCorruptError, StoreError } from '../../src/errors.js';
import { SCHEMA_VERSION } from '../../src/store/migrations.js';
import { openStore } from '../../src/store/open.js';
import { listRuns } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
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

  it('is readable by the sqlite3 command while a connection holds it open', async () => {
    const file = path.join(temp.dir, 'inventory.sqlite');
    const store = openStore(file);
    await commitItems(store, [[makeItem('a'), makeItem('b')]]);
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
    expect(error).toBeInstanceOf(StoreCorruptError);
    expect(error).toMatchObject({ code: 'STORE_CORRUPT', retryable: false, path: file });
    expect(error.message).toBe(
      `Cannot open store ${file}: it is corrupt (file is not a database). Move it aside (with its -wal and -shm files, if any), for example to inventory.sqlite.corrupt: the next sync starts a new history, and the feeds stay as last published until then.`,
    );
    expect(readFileSync(file, 'utf8')).toMatch(/^this is not sqlite/);
  });

  it('names the file when its place is taken by a directory', () => {
    const file = path.join(temp.dir, 'inventory.sqlite');
    mkdirSync(file);
    expect(() => openStore(file)).toThrow(new RegExp(`^Cannot open store ${file}: .+\\.$`));
  });

  it('says the store is locked by another process, retryably, and leaves its data intact', async () => {
    const file = path.join(temp.dir, 'inventory.sqlite');
    const store = openStore(file);
    const run = await commitItems(store, [[makeItem('a'), makeItem('b')]]);
    store.close();
    const holder = new Database(file);
    holder.pragma('locking_mode = EXCLUSIVE');
    holder.exec('BEGIN EXCLUSIVE');

    const error = captureError(() => openStore(file, { busyTimeoutMs: 50 }));
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toBe(
      `Cannot open store ${file}: another process holds it locked (database is locked).`,
    );
    expect(error).toMatchObject({ code: 'STORE_LOCKED', retryable: true });

    holder.exec('ROLLBACK');
    holder.close();
    const again = openStore(file);
    expect([...snapshotItems(again, run)].map((item) => item.id)).toEqual(['a', 'b']);
    again.close();
  });

  it('says which folder is read-only, and leaves the store as it was', async () => {
    const folder = path.join(temp.dir, 'shop');
    const file = path.join(folder, 'inventory.sqlite');
    const store = openStore(file);
    const run = await commitItems(store, [[makeItem('a')]]);
    store.close();
    chmodSync(temp.dir, 0o755);
    chmodSync(folder, 0o555);
    const opened = openAsUnprivileged(file);
    chmodSync(folder, 0o755);
    expect(opened).toBe(
      `Cannot open store ${file}: the folder ${folder} is read-only (attempt to write a readonly database).`,
    );
    const again = openStore(file);
    expect([...snapshotItems(again, run)].map((item) => item.id)).toEqual(['a']);
    again.close();
  });

  it('refuses a store written by a newer version instead of guessing', () => {
    const file = path.join(temp.dir, 'inventory.sqlite');
    const store = openStore(file);
    store.db.pragma('user_version = 99');
    store.close();
    expect(() => openStore(file)).toThrow(
      `its schema version 99 is newer than this shop-sync understands (${SCHEMA_VERSION})`,
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

/**
 * Opens the store in a child process that file permissions apply to (as nobody when the tests run as
 * root, who may write anywhere); returns the error message, or 'opened'.
 */
function openAsUnprivileged(file: string): string {
  const module = pathToFileURL(path.resolve('dist/src/store/open.js')).href;
  const script = `import { openStore } from ${JSON.stringify(module)};
    try { openStore(process.argv[1]).close(); console.log('opened'); } catch (e) { console.log(e.message); }`;
  const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, file], {
    ...asNobody,
    encoding: 'utf8',
  });
  return out.trim();
}
