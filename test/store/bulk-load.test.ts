import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { commitRun } from '../../src/store/commit.js';
import { migrate } from '../../src/store/migrations.js';
import type { Store } from '../../src/store/open.js';
import { beginRun, discardUnfinishedRuns, getRun } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { type StagedPage, StagingBatch } from '../../src/store/staging.js';
import { commitItems, freshStorePerTest, makeItem } from './fixtures.js';

const sandbox = freshStorePerTest();

const ID_INDEX_SQL = "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'item_versions_id'";
const idIndex = (store: Store) => store.db.prepare(ID_INDEX_SQL).pluck().get() as string | undefined;

/** The index of ids as the migrations create it, in a store of their own. */
function migratedIdIndex(): string {
  const db = new Database(':memory:');
  migrate(db);
  const sql = db.prepare(ID_INDEX_SQL).pluck().get() as string;
  db.close();
  return sql;
}

const page = (n: number, ...items: ReturnType<typeof makeItem>[]): StagedPage => ({
  page: n,
  items,
  invalid: [],
  sent: items.map((_, i) => n * 100 + i),
});

/** A batch that stages only when flushed. */
const batchOf = (store: Store, run: number) =>
  new StagingBatch(store, run, () => undefined, { pages: 1000, ms: 3_600_000 });

const begin = (store: Store) => beginRun(store, { query: 'q', resumeWindowMinutes: 60 });

describe('a first sync bulk-loads', () => {
  it('without the index of ids until the listing is read, then with it exactly as migrated', async () => {
    const { store } = sandbox;
    const { run } = begin(store);
    const batch = batchOf(store, run);
    batch.add(page(1, makeItem('b'), makeItem('a')));
    batch.flush();
    expect(idIndex(store)).toBeUndefined();
    batch.add(page(2, makeItem('c')));
    await batch.finish();
    expect(idIndex(store)).toBe(migratedIdIndex());
    expect(commitRun(store, run, () => undefined)).toMatchObject({ items: 3, added: 3 });
  });

  it('keeps the values read last of an id read twice, within a batch and across batches', async () => {
    const { store } = sandbox;
    const { run } = begin(store);
    const batch = batchOf(store, run);
    batch.add(page(1, makeItem('a', { quantity: 1 }), makeItem('b', { quantity: 1 })));
    batch.add(page(2, makeItem('a', { quantity: 2 })));
    batch.flush();
    batch.add(page(3, makeItem('b', { quantity: 3 })));
    await batch.finish();
    expect(commitRun(store, run, () => undefined)).toMatchObject({ items: 2, added: 2, updated: 0 });
    expect([...snapshotItems(store, run)].map(({ id, quantity }) => [id, quantity])).toEqual([
      ['a', 2],
      ['b', 3],
    ]);
    expect(getRun(store, run)).toMatchObject({ items: 2, pages: 3 });
  });

  it('only into a store with no versions: a resync writes through the per-batch writer and keeps the index', async () => {
    const { store } = sandbox;
    await commitItems(store, [[makeItem('a')]]);
    const { run } = begin(store);
    const batch = batchOf(store, run);
    batch.add(page(1, makeItem('a', { quantity: 5 }), makeItem('b')));
    batch.flush();
    expect(idIndex(store)).toBe(migratedIdIndex());
    await batch.finish();
    expect(commitRun(store, run, () => undefined)).toMatchObject({ items: 2, added: 1, updated: 1 });
  });

  it('stopped half way, is resumed by the next run with the index built again, and completes with every item', async () => {
    const { run } = begin(sandbox.store);
    const first = batchOf(sandbox.store, run);
    first.add(page(1, makeItem('a', { quantity: 1 }), makeItem('b')));
    first.flush();
    first.add(page(2, makeItem('a', { quantity: 2 })));
    first.flush();
    // The process dies here: no finish, no commit.
    const store = sandbox.reopen();
    expect(idIndex(store)).toBeUndefined();
    const resumed = begin(store);
    expect(resumed).toMatchObject({ run, resumed: true, startPage: 3 });
    expect(idIndex(store)).toBe(migratedIdIndex());
    const second = batchOf(store, run);
    second.add(page(3, makeItem('c'), makeItem('a', { quantity: 3 })));
    await second.finish();
    expect(commitRun(store, run, () => undefined)).toMatchObject({ items: 3, added: 3 });
    expect([...snapshotItems(store, run)].map(({ id, quantity }) => [id, quantity])).toEqual([
      ['a', 3],
      ['b', 1],
      ['c', 1],
    ]);
  });

  it('stopped half way and not resumed, leaves no complete run; the next first sync bulk-loads afresh', async () => {
    const { run } = begin(sandbox.store);
    const first = batchOf(sandbox.store, run);
    first.add(page(1, makeItem('a'), makeItem('b')));
    first.flush();
    const store = sandbox.reopen();
    const next = beginRun(store, { query: 'another query', resumeWindowMinutes: 60 });
    expect(next.resumed).toBe(false);
    expect(await discardUnfinishedRuns(store, next.run)).toEqual([run]);
    expect(store.db.prepare('SELECT count(*) FROM item_versions').pluck().get()).toBe(0);
    const batch = batchOf(store, next.run);
    batch.add(page(1, makeItem('c')));
    batch.flush();
    expect(idIndex(store)).toBeUndefined();
    await batch.finish();
    expect(commitRun(store, next.run, () => undefined)).toMatchObject({ items: 1, added: 1 });
    expect([...snapshotItems(store, next.run)].map(({ id }) => id)).toEqual(['c']);
  });

  it('does not begin when its first batch is refused: the index stays and nothing is written', () => {
    const { store } = sandbox;
    const { run } = begin(store);
    const batch = new StagingBatch(
      store,
      run,
      () => {
        throw new Error('lost the lease');
      },
      { pages: 1000, ms: 3_600_000 },
    );
    batch.add(page(1, makeItem('a')));
    expect(() => batch.flush()).toThrow('lost the lease');
    expect(idIndex(store)).toBe(migratedIdIndex());
    expect(store.db.prepare('SELECT count(*) FROM item_versions').pluck().get()).toBe(0);
  });
});
