import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keepStore } from '../../src/store/keeper.js';
import { SCHEMA_VERSION } from '../../src/store/migrations.js';
import { createStoreFile } from '../../src/store/new-store.js';
import { openStore } from '../../src/store/open.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { commitItems, makeItem, tempDir } from './fixtures.js';

let temp: ReturnType<typeof tempDir>;
let file: string;
beforeEach(async () => {
  temp = tempDir();
  file = path.join(temp.dir, 'inventory.sqlite');
  await createStoreFile(file);
});
afterEach(() => temp.cleanup());

const walSize = () => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : null);
/** The WAL's header and one frame of a 4 KiB page: what the keeper's first write leaves. */
const ONE_FRAME = 32 + 24 + 4096;

describe('keepStore', () => {
  it("makes the WAL's first write and is the last connection: the sync's close leaves the checkpoint to it", async () => {
    expect(walSize()).toBeNull();
    const keeper = await keepStore(file);
    expect(walSize()).toBe(ONE_FRAME);
    const store = openStore(file);
    const run = await commitItems(store, [[makeItem('a'), makeItem('b')]]);
    store.close();
    // The sync's connection was not the last: the WAL holds its writes, not yet in the store.
    expect(walSize()).toBeGreaterThan(ONE_FRAME);
    await keeper.letGo();
    expect(walSize()).toBeNull();
    const again = openStore(file);
    expect([...snapshotItems(again, run)].map((item) => item.id)).toEqual(['a', 'b']);
    expect(again.db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    again.close();
  });

  it('leaves a store another connection is writing to that connection, and still checkpoints it last', async () => {
    const writer = new Database(file);
    writer.exec('BEGIN IMMEDIATE');
    const keeper = await keepStore(file);
    expect(walSize()).toBe(0);
    writer.exec('COMMIT');
    writer.close();
    const store = openStore(file);
    await commitItems(store, [[makeItem('a')]]);
    store.close();
    expect(walSize()).toBeGreaterThan(0);
    await keeper.letGo();
    expect(walSize()).toBeNull();
  });

  it('does nothing for a store it cannot open: the sync reports that', async () => {
    const missing = path.join(temp.dir, 'missing', 'inventory.sqlite');
    const keeper = await keepStore(missing);
    await keeper.letGo();
    expect(existsSync(missing)).toBe(false);
  });
});
