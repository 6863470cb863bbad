import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/open.js';
import { beginRun, getRunDetail } from '../../src/store/run-records.js';
import { type StagedPage, StagingBatch, stagePages } from '../../src/store/staging.js';
import { makeItem, openTempStore, tempDir } from './fixtures.js';

let temp: ReturnType<typeof tempDir>;
let store: Store;
let run: number;

beforeEach(() => {
  temp = tempDir();
  store = openTempStore(temp.dir);
  run = beginRun(store, { query: 'q', resumeWindowMinutes: 60 }).run;
});
afterEach(() => {
  store.close();
  temp.cleanup();
});

const page = (n: number): StagedPage => ({ page: n, items: [makeItem(`item-${n}`)], invalid: [] });
/** The ids the run has read: those it opened a version for, and those it matched to one. */
const staged = () =>
  store.db
    .prepare(
      `SELECT id FROM item_versions WHERE valid_from_run = @run
       UNION SELECT v.id FROM run_matched m JOIN item_versions v USING (version) WHERE m.run = @run
       ORDER BY id`,
    )
    .pluck()
    .all({ run }) as string[];
const checkpoint = () => getRunDetail(store, run)?.checkpoint_page;
const lost = () => {
  throw new Error('lost the lease');
};

describe('staging pages in batches', () => {
  it('stages several pages and moves the checkpoint to the last of them in one transaction', () => {
    const invalid = [{ id: 'bad', page: 2, reason: 'price is not a number' }];
    stagePages(store, run, [page(1), { ...page(2), invalid }, page(3)], () => undefined);
    expect(staged()).toEqual(['item-1', 'item-2', 'item-3']);
    expect(getRunDetail(store, run)).toMatchObject({ checkpoint_page: 3, pages: 3, items: 3, invalid: 1 });
  });

  it('stages none of a batch, nor moves the checkpoint, when the guard refuses', () => {
    stagePages(store, run, [page(1)], () => undefined);
    expect(() => stagePages(store, run, [page(2), page(3)], lost)).toThrow('lost the lease');
    expect(staged()).toEqual(['item-1']);
    expect(getRunDetail(store, run)).toMatchObject({ checkpoint_page: 1, pages: 1, items: 1 });
  });

  it('holds pages back until the batch is full, and stages the rest when flushed', () => {
    const batch = new StagingBatch(store, run, () => undefined, { pages: 3, ms: 60_000 });
    batch.add(page(1));
    batch.add(page(2));
    expect([staged(), checkpoint()]).toEqual([[], 0]);
    batch.add(page(3));
    expect([staged(), checkpoint()]).toEqual([['item-1', 'item-2', 'item-3'], 3]);
    batch.add(page(4));
    batch.flush();
    expect([staged(), checkpoint()]).toEqual([['item-1', 'item-2', 'item-3', 'item-4'], 4]);
  });

  it('stages a page at once when the batch is due', () => {
    const batch = new StagingBatch(store, run, () => undefined, { pages: 100, ms: 0 });
    batch.add(page(1));
    expect([staged(), checkpoint()]).toEqual([['item-1'], 1]);
  });

  it('drops the pages of a failed flush, leaving them for the resumed run to read again', () => {
    let held = true;
    const batch = new StagingBatch(
      store,
      run,
      () => {
        if (!held) lost();
      },
      { pages: 100, ms: 60_000 },
    );
    batch.add(page(1));
    held = false;
    expect(() => batch.flush()).toThrow('lost the lease');
    held = true;
    batch.flush();
    expect([staged(), checkpoint()]).toEqual([[], 0]);
    expect(beginRun(store, { query: 'q', resumeWindowMinutes: 60 })).toEqual({
      run,
      startPage: 1,
      resumed: true,
    });
  });
});
