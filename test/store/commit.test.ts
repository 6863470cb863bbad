import { describe, expect, it } from 'vitest';
import type { Decimal } from '../../src/domain/decimal.js';
import type { Item } from '../../src/domain/item.js';
import { commitRun } from '../../src/store/commit.js';
import { diffRuns } from '../../src/store/diff-runs.js';
import { openStore, type Store } from '../../src/store/open.js';
import { beginRun, getRun } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { stagePages } from '../../src/store/staging.js';
import { commitItems, freshStorePerTest, makeItem } from './fixtures.js';

const sandbox = freshStorePerTest();

const versionCount = () => sandbox.store.db.prepare('SELECT count(*) FROM item_versions').pluck().get();
const ids = (run: number) => [...snapshotItems(sandbox.store, run)].map((i) => i.id);

describe('committing runs as type-2 versions', () => {
  it('writes nothing for an unchanged item and counts it as neither added nor updated', async () => {
    const a = makeItem('a');
    await commitItems(sandbox.store, [[a, makeItem('b')]]);
    const second = await commitItems(sandbox.store, [[{ ...a, raw: '{"id":"a","views":7}' }, makeItem('b')]]);
    expect(versionCount()).toBe(2);
    expect(getRun(sandbox.store, second)).toMatchObject({
      status: 'complete',
      items: 2,
      added: 0,
      updated: 0,
      removed: 0,
    });
  });

  it('closes the old version and opens a new one when a tracked field changes', async () => {
    const first = await commitItems(sandbox.store, [[makeItem('a')]]);
    const second = await commitItems(sandbox.store, [[makeItem('a', { quantity: 5 })]]);
    expect(getRun(sandbox.store, second)).toMatchObject({ added: 0, updated: 1, removed: 0 });
    expect([...snapshotItems(sandbox.store, first)][0]?.quantity).toBe(1);
    expect([...snapshotItems(sandbox.store, second)][0]?.quantity).toBe(5);
    const versions = sandbox.store.db
      .prepare('SELECT valid_from_run AS f, valid_to_run AS t FROM item_versions ORDER BY f')
      .all();
    expect(versions).toEqual([
      { f: first, t: second },
      { f: second, t: null },
    ]);
  });

  it('retires a missing item and brings it back as added when it returns', async () => {
    const r1 = await commitItems(sandbox.store, [[makeItem('a'), makeItem('b')]]);
    const r2 = await commitItems(sandbox.store, [[makeItem('a')]]);
    const r3 = await commitItems(sandbox.store, [[makeItem('a'), makeItem('b')]]);
    expect(getRun(sandbox.store, r2)).toMatchObject({ removed: 1, added: 0 });
    expect(getRun(sandbox.store, r3)).toMatchObject({ removed: 0, added: 1 });
    expect([ids(r1), ids(r2), ids(r3)]).toEqual([['a', 'b'], ['a'], ['a', 'b']]);
    expect([...diffRuns(sandbox.store, r2, r3)].map((c) => [c.change, c.id])).toEqual([['added', 'b']]);
    expect([...diffRuns(sandbox.store, r1, r3)]).toEqual([]);
  });

  it('counts an id read twice in one run once, with the values read last', () => {
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    const pages = [
      { page: 1, items: [makeItem('a'), makeItem('b')], invalid: [] },
      { page: 2, items: [makeItem('b', { quantity: 9 })], invalid: [] },
    ];
    stagePages(sandbox.store, run, pages, () => undefined);
    expect(getRun(sandbox.store, run)).toMatchObject({ status: 'running', items: 2, pages: 2 });
    commitRun(sandbox.store, run, () => undefined);
    expect(getRun(sandbox.store, run)).toMatchObject({ items: 2, added: 2 });
    expect([...snapshotItems(sandbox.store, run)].map((i) => [i.id, i.quantity])).toEqual([
      ['a', 1],
      ['b', 9],
    ]);
  });

  it('on a first run, counts an id read again in a later batch, or after resuming on another connection, once', () => {
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    const stage = (store: Store, page: number, items: Item[]) =>
      stagePages(store, run, [{ page, items, invalid: [] }], () => undefined);
    stage(sandbox.store, 1, [makeItem('a'), makeItem('b')]);
    stage(sandbox.store, 2, [makeItem('b', { quantity: 9 })]);
    const resumed = openStore(sandbox.store.path);
    try {
      stage(resumed, 3, [makeItem('a', { quantity: 5 }), makeItem('c')]);
      expect(getRun(resumed, run)).toMatchObject({ items: 3, pages: 3 });
      expect(commitRun(resumed, run, () => undefined)).toMatchObject({ items: 3, added: 3, updated: 0 });
    } finally {
      resumed.close();
    }
    expect(versionCount()).toBe(3);
    expect([...snapshotItems(sandbox.store, run)].map((i) => [i.id, i.quantity])).toEqual([
      ['a', 5],
      ['b', 9],
      ['c', 1],
    ]);
  });

  it('on a first run, inserts two ids whose hashes collide, and still counts an id read again once', () => {
    // FNV-1a (32 bits) of these two ids is the same: the second is asked about as if read again, and inserted.
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    const stage = (page: number, items: Item[]) =>
      stagePages(sandbox.store, run, [{ page, items, invalid: [] }], () => undefined);
    stage(1, [makeItem('item-352798')]);
    stage(2, [makeItem('item-1023240')]);
    stage(3, [makeItem('item-352798', { quantity: 4 })]);
    expect(commitRun(sandbox.store, run, () => undefined)).toMatchObject({ items: 2, added: 2 });
    expect(versionCount()).toBe(2);
    expect([...snapshotItems(sandbox.store, run)].map((i) => [i.id, i.quantity])).toEqual([
      ['item-1023240', 1],
      ['item-352798', 4],
    ]);
  });

  it('takes the values read last when an id read twice was unchanged one time and changed the other', async () => {
    const first = await commitItems(sandbox.store, [[makeItem('a'), makeItem('b')]]);
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    const pages = [
      [makeItem('a'), makeItem('b', { quantity: 5 })],
      [makeItem('a', { quantity: 3 }), makeItem('b')],
    ];
    pages.forEach((items, index) => {
      stagePages(sandbox.store, run, [{ page: index + 1, items, invalid: [] }], () => undefined);
    });
    expect(commitRun(sandbox.store, run, () => undefined)).toEqual({
      pages: 2,
      items: 2,
      invalid: 0,
      added: 0,
      updated: 1,
      removed: 0,
    });
    expect([...snapshotItems(sandbox.store, run)]).toEqual([makeItem('a', { quantity: 3 }), makeItem('b')]);
    expect([...diffRuns(sandbox.store, first, run)].map((c) => [c.change, c.id, c.fields])).toEqual([
      ['updated', 'a', ['quantity']],
    ]);
  });

  it('neither retires nor changes an item that this run read as invalid, and counts it in the snapshot', async () => {
    await commitItems(sandbox.store, [[makeItem('a'), makeItem('b')]]);
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    const invalid = [{ id: 'b', page: 1, reason: 'price is not a number' }];
    stagePages(sandbox.store, run, [{ page: 1, items: [makeItem('a')], invalid }], () => undefined);
    const counts = commitRun(sandbox.store, run, () => undefined);
    expect(counts).toEqual({ pages: 1, items: 2, invalid: 1, added: 0, updated: 0, removed: 0 });
    expect(ids(run)).toEqual(['a', 'b']);
    expect(
      sandbox.store.db.prepare('SELECT id, page, reason FROM invalid_items WHERE run = ?').all(run),
    ).toEqual([{ id: 'b', page: 1, reason: 'price is not a number' }]);
  });

  it('round-trips every field exactly, raw included', async () => {
    const item = makeItem('x', {
      title: '=SUM(A1) "quoted", line\nbreak 🎉 Привет',
      price: '0.3' as Decimal,
      original_price: '1234567890.125' as Decimal,
      published: false,
      photos: ['https://p/1.jpg', 'https://p/2.jpg'],
      photos_id: [3, 4],
      description: null,
      shop_image: 'https://p/shop.png',
      raw: '{"id":"x","price":"0.30","extra":[1,2]}',
    });
    const run = await commitItems(sandbox.store, [[item]]);
    expect([...snapshotItems(sandbox.store, run)]).toEqual([item]);
  });
});
