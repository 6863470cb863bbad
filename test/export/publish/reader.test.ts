import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/errors.js';
import { openReader } from '../../../src/export/publish/reader.js';
import type { Store } from '../../../src/store/open.js';
import { snapshotItems } from '../../../src/store/snapshot.js';
import { commitItems, makeItem, openTempStore, tempDir } from '../../store/fixtures.js';

let temp: ReturnType<typeof tempDir>;
let store: Store;
beforeEach(() => {
  temp = tempDir('shop-sync-reader-');
  store = openTempStore(temp.dir);
});
afterEach(() => {
  store.close();
  temp.cleanup();
});

describe('openReader', () => {
  it('streams from its own connection while the store’s connection keeps writing', async () => {
    const run = await commitItems(store, [[makeItem('a'), makeItem('b'), makeItem('c')]]);
    const reader = openReader(store);
    try {
      const ids: string[] = [];
      for (const item of snapshotItems(reader, run)) {
        ids.push(item.id);
        store.db.prepare('UPDATE runs SET heartbeat_at = heartbeat_at WHERE run = ?').run(run);
      }
      expect(ids).toEqual(['a', 'b', 'c']);
      expect(() => reader.db.prepare('DELETE FROM runs').run()).toThrow(/readonly/);
    } finally {
      reader.close();
      reader.close();
    }
  });

  it('names the store when it cannot be opened', async () => {
    store.close();
    rmSync(store.path);
    const error = (() => {
      try {
        openReader(store);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toMatch(new RegExp(`^Cannot read store ${store.path}: `));
  });
});
