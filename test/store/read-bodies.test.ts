import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitRun } from '../../src/store/commit.js';
import type { Store } from '../../src/store/open.js';
import { ReadBodies } from '../../src/store/read-bodies.js';
import { beginRun, discardRunData, discardUnfinishedRuns } from '../../src/store/run-records.js';
import { stagePages } from '../../src/store/staging.js';
import { makeItem, openTempStore, tempDir } from './fixtures.js';

let temp: ReturnType<typeof tempDir>;
let store: Store;

beforeEach(() => {
  temp = tempDir();
  store = openTempStore(temp.dir);
});
afterEach(() => {
  store.close();
  temp.cleanup();
});

const elements = (...ids: string[]) => ({ ids, sent: ids.map((_, i) => 1_000_000 + i) });

/** A run that stages one page, with what `bodies` learnt and used, and completes. */
async function completeRun(bodies: ReadBodies): Promise<number> {
  const { run } = beginRun(store, { query: 'q', resumeWindowMinutes: 60 });
  stagePages(store, run, [{ page: 1, items: [makeItem('a')], invalid: [] }], () => undefined, { bodies });
  commitRun(store, run, () => undefined);
  await discardRunData(store, run, { complete: true });
  return run;
}

const digests = () =>
  store.db.prepare('SELECT digest FROM listing_bodies ORDER BY digest').pluck().all() as string[];

/** Each body's digest with the run that last received it, as `listing_body_runs` keeps them. */
const receivedBy = () =>
  Object.fromEntries(
    store.db
      .prepare('SELECT digest, run FROM listing_body_runs JOIN listing_bodies USING (body)')
      .raw()
      .all() as [string, number][],
  );
const runRows = () => store.db.prepare('SELECT count(*) FROM listing_body_runs').pluck().get();

describe('the listing bodies a store has read', () => {
  it('are known to the next run by digest, with their elements in order', async () => {
    const first = new ReadBodies(store);
    first.learn('page-1', elements('b', 'a'), 'page-1');
    expect(first.elementsOf('page-1')).toBeUndefined();
    await completeRun(first);
    expect(new ReadBodies(store).elementsOf('page-1')).toEqual(elements('b', 'a'));
    expect(new ReadBodies(store).elementsOf('page-2')).toBeUndefined();
  });

  it('are dropped once a complete run did not receive them, and kept while one does', async () => {
    const first = new ReadBodies(store);
    first.learn('kept', elements('a'), 'kept');
    first.learn('gone', elements('b'), 'gone');
    await completeRun(first);
    const second = new ReadBodies(store);
    expect(second.elementsOf('kept')).toEqual(elements('a'));
    const run = await completeRun(second);
    expect(digests()).toEqual(['kept']);
    expect(receivedBy()).toEqual({ kept: run });
    expect(runRows()).toBe(1);
  });

  it('keep the run that received them beside their rows, and drop a run left without its body', async () => {
    const first = new ReadBodies(store);
    first.learn('page-1', elements('a'), 'page-1');
    const learnt = await completeRun(first);
    expect(receivedBy()).toEqual({ 'page-1': learnt });
    // As a process stopped between deleting a body and its run leaves it.
    store.db.prepare('INSERT INTO listing_body_runs (body, run) VALUES (1000, ?)').run(learnt);
    const second = new ReadBodies(store);
    expect(second.elementsOf('page-1')).toEqual(elements('a'));
    const used = await completeRun(second);
    expect(receivedBy()).toEqual({ 'page-1': used });
    expect(runRows()).toBe(1);
  });

  it('give a body learnt under the number of one whose run was left behind that run, overwritten', async () => {
    const first = new ReadBodies(store);
    first.learn('gone', elements('a'), 'page-1');
    const learnt = await completeRun(first);
    // As a process stopped between deleting the body and its run leaves them: its number is free again.
    store.db.prepare("DELETE FROM listing_bodies WHERE digest = 'gone'").run();
    const second = new ReadBodies(store);
    second.learn('new', elements('b'), 'page-1');
    const run = await completeRun(second);
    expect(run).toBeGreaterThan(learnt);
    expect(receivedBy()).toEqual({ new: run });
    expect(digests()).toEqual(['new']);
  });

  it('stay while the run that would drop them fails', async () => {
    const first = new ReadBodies(store);
    first.learn('page-1', elements('a'), 'page-1');
    await completeRun(first);
    const { run } = beginRun(store, { query: 'q', resumeWindowMinutes: 60 });
    await discardRunData(store, run, { complete: false });
    expect(digests()).toEqual(['page-1']);
  });

  it('read a row that does not hold elements as unknown, and are repaired by learning the body again', async () => {
    const first = new ReadBodies(store);
    first.learn('page-1', elements('a'), 'page-1');
    await completeRun(first);
    for (const broken of [
      'not json',
      '[]',
      '{"a":1}',
      '[["a"],["1"]]',
      '[[1],[2]]',
      '[["a"],[1,2]]',
      '[[],[]]',
    ]) {
      store.db.prepare('UPDATE listing_bodies SET elements = ?').run(broken);
      expect(new ReadBodies(store).elementsOf('page-1')).toBeUndefined();
    }
    const again = new ReadBodies(store);
    again.learn('page-1', elements('a', 'b'), 'page-1');
    await completeRun(again);
    expect(new ReadBodies(store).elementsOf('page-1')).toEqual(elements('a', 'b'));
  });
});

describe("a listing body's versions", () => {
  /** A run that reads `a` (quantity `quantity`, text `sent`) on the page `digest`, learning it if new. */
  async function readA(quantity: number, sent: number, options: { complete?: boolean } = {}) {
    const { run } = beginRun(store, { query: 'q', resumeWindowMinutes: 0 });
    await discardUnfinishedRuns(store, run);
    const bodies = new ReadBodies(store);
    const known = bodies.elementsOf('page-1');
    if (known === undefined) bodies.learn('page-1', { ids: ['a'], sent: [sent] }, 'page-1');
    const items = [makeItem('a', { quantity })];
    stagePages(store, run, [{ page: 1, items, invalid: [], sent: [sent] }], () => undefined, { bodies });
    if (options.complete !== false) commitRun(store, run, () => undefined);
    return { run, known };
  }
  const versionOfA = () =>
    store.db
      .prepare('SELECT version FROM item_versions WHERE id = ? AND valid_to_run IS NULL')
      .pluck()
      .get('a');

  it('are vouched for once the run that wrote them is complete, and not while it is unfinished', async () => {
    await readA(1, 7, { complete: false });
    expect((await readA(1, 7)).known?.versions).toBeUndefined();
    const { known } = await readA(1, 7);
    expect(known).toMatchObject({ ids: ['a'], sent: [7], versions: [versionOfA()] });
  });

  it('are not vouched for once one of them was closed, even if the item is back to the same text', async () => {
    await readA(1, 7);
    await readA(2, 8);
    expect((await readA(1, 7)).known?.versions).toBeUndefined();
  });

  it('are forgotten when the run that wrote them reads the item otherwise in a later batch', async () => {
    await readA(1, 7);
    const { run } = beginRun(store, { query: 'q', resumeWindowMinutes: 0 });
    const bodies = new ReadBodies(store);
    bodies.learn('page-2', { ids: ['b'], sent: [9] }, 'page-2');
    const page = (quantity: number) => ({
      page: 1,
      items: [makeItem('b', { quantity })],
      invalid: [],
      sent: [9],
    });
    stagePages(store, run, [page(1)], () => undefined, { bodies });
    const recorded = () =>
      store.db
        .prepare("SELECT versions IS NOT NULL FROM listing_bodies WHERE digest = 'page-2'")
        .pluck()
        .get();
    expect(recorded()).toBe(1);
    stagePages(store, run, [page(2)], () => undefined, { bodies });
    expect(recorded()).toBe(0);
    commitRun(store, run, () => undefined);
    expect(new ReadBodies(store).elementsOf('page-2')).toEqual({ ids: ['b'], sent: [9] });
  });

  /** A complete run that reads the page `page` as the body `digest`, holding `a` and `b`. */
  async function readPage(
    digest: string,
    page: string,
    quantityOfA: number,
    sent: [number, number],
    lengths?: [number, number],
  ) {
    const { run } = beginRun(store, { query: 'q', resumeWindowMinutes: 0 });
    await discardUnfinishedRuns(store, run);
    const bodies = new ReadBodies(store);
    const previous = bodies.previousOf(page);
    bodies.learn(digest, { ids: ['a', 'b'], sent, ...(lengths && { lengths }) }, page);
    const items = [makeItem('a', { quantity: quantityOfA }), makeItem('b')];
    stagePages(store, run, [{ page: 1, items, invalid: [], sent }], () => undefined, { bodies });
    commitRun(store, run, () => undefined);
    await discardRunData(store, run, { complete: true });
    return previous;
  }
  const openVersion = (id: string) =>
    store.db
      .prepare('SELECT version FROM item_versions WHERE id = ? AND valid_to_run IS NULL')
      .pluck()
      .get(id);

  it("are what a changed answer of the same page is read against, while the page's latest row vouches for them", async () => {
    expect(await readPage('one', 'page 1', 1, [7, 8])).toBeUndefined();
    const previous = new ReadBodies(store).previousOf('page 1');
    expect(previous).toMatchObject({
      ids: ['a', 'b'],
      sent: [7, 8],
      versions: [openVersion('a'), openVersion('b')],
    });
    expect(new ReadBodies(store).previousOf('page 2')).toBeUndefined();
    // The page changes (a's text and values): its new row is the page's, and vouches once complete.
    expect(await readPage('two', 'page 1', 2, [9, 8])).toEqual(previous);
    expect(new ReadBodies(store).previousOf('page 1')).toMatchObject({ sent: [9, 8] });
    expect(digests()).toEqual(['two']);
  });

  it("hand a changed answer the lengths of the page's elements before, where its reading gave them", async () => {
    await readPage('one', 'page 1', 1, [7, 8], [120, 98]);
    expect(new ReadBodies(store).previousOf('page 1')).toMatchObject({ sent: [7, 8], lengths: [120, 98] });
    // A row that holds no lengths (learnt before they were recorded, or by a reading without them).
    await readPage('two', 'page 1', 2, [9, 8]);
    expect(new ReadBodies(store).previousOf('page 1')).not.toHaveProperty('lengths');
    // Lengths that do not fit the elements are none.
    store.db.prepare(`UPDATE listing_bodies SET elements = '[["a","b"],[9,8],[5]]'`).run();
    expect(new ReadBodies(store).previousOf('page 1')).toMatchObject({ ids: ['a', 'b'], sent: [9, 8] });
    expect(new ReadBodies(store).previousOf('page 1')).not.toHaveProperty('lengths');
  });

  it('are not what a changed answer is read against once one of them was closed', async () => {
    await readPage('one', 'page 1', 1, [7, 8]);
    // The same page received as another body of the same elements (a different digest) that closes a.
    const { run } = beginRun(store, { query: 'q', resumeWindowMinutes: 0 });
    const bodies = new ReadBodies(store);
    stagePages(
      store,
      run,
      [{ page: 1, items: [makeItem('a', { quantity: 3 })], invalid: [], sent: [10] }],
      () => undefined,
      {
        bodies,
      },
    );
    commitRun(store, run, () => undefined);
    expect(new ReadBodies(store).previousOf('page 1')).toBeUndefined();
  });
});
