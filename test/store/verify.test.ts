import { closeSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreCorruptError, type StoreError } from '../../src/errors.js';
import { checkStore, startStoreCheck } from '../../src/store/verify.js';
import { commitItems, freshStorePerTest, makeItem } from './fixtures.js';

const sandbox = freshStorePerTest();

/** Garbage over the header of the page that holds the item versions' first rows. */
function corruptItemVersions(): void {
  const { db, path: file } = sandbox.store;
  const root = db
    .prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'item_versions'")
    .pluck()
    .get() as number;
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.pragma('wal_checkpoint(TRUNCATE)');
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.alloc(32, 0x5a), 0, 32, (root - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}

describe('the store check (PRAGMA quick_check in a worker thread)', () => {
  it('finds an intact store intact, while its own connection stays open', async () => {
    await commitItems(sandbox.store, [[makeItem('a'), makeItem('b')]]);
    expect(await checkStore(sandbox.store.path)).toEqual({ status: 'ok' });
  });

  it('finds a damaged page and says how to recover', async () => {
    await commitItems(sandbox.store, [Array.from({ length: 50 }, (_, i) => makeItem(`id-${i}`))]);
    corruptItemVersions();
    const health = await checkStore(sandbox.store.path);
    expect(health.status).toBe('corrupt');
    const error = (health as { error: StoreError }).error;
    expect(error).toBeInstanceOf(StoreCorruptError);
    expect(error).toMatchObject({ code: 'STORE_CORRUPT', path: sandbox.store.path, retryable: false });
    expect(error.message).toMatch(
      new RegExp(
        `^The store ${sandbox.store.path} is corrupt \\(SQLite's quick_check: [^\\n]+\\)\\. Move it aside`,
      ),
    );
  });

  it('names the file when it cannot be read at all', async () => {
    const missing = path.join(sandbox.dir, 'nowhere', 'inventory.sqlite');
    const health = await checkStore(missing);
    expect(health.status).toBe('failed');
    expect((health as { error: StoreError }).error.message).toMatch(
      new RegExp(`^Cannot verify store ${missing}: .+\\.$`),
    );
  });

  it('can be cancelled without holding anything', async () => {
    const check = startStoreCheck(sandbox.store.path);
    check.cancel();
    await expect(check.result).resolves.toMatchObject({ status: expect.stringMatching(/^(ok|failed)$/) });
  });
});
