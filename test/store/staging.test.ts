import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredVersion } from '../../src/domain/unchanged-item.js';
import { commitRun } from '../../src/store/commit.js';
import type { Store } from '../../src/store/open.js';
import { beginRun, getRunDetail } from '../../src/store/run-records.js';
import { SentVersions } from '../../src/store/sent-index.js';
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

describe('items known unchanged from their text', () => {
  /** Run 1 complete with item `a` at quantity 1; run 2 begun. Returns `a`'s version in run 1. */
  async function afterOneRun(): Promise<StoredVersion> {
    stagePages(
      store,
      run,
      [{ page: 1, items: [makeItem('a', { quantity: 1 })], invalid: [], sent: [7] }],
      () => undefined,
    );
    commitRun(store, run, () => undefined);
    run = beginRun(store, { query: 'q', resumeWindowMinutes: 60 }).run;
    const [version] = new SentVersions(store, run).versionsOf([{ id: 'a', sent: 7 }]);
    if (version === undefined) throw new Error('the text of a was not kept');
    return version;
  }
  const quantities = () =>
    store.db
      .prepare(
        `SELECT v.quantity FROM item_versions v
          WHERE v.valid_from_run = @run OR EXISTS (SELECT 1 FROM run_matched m WHERE m.run = @run AND m.version = v.version)`,
      )
      .pluck()
      .all({ run });

  it('is the version its text was read from, unless the run read the item otherwise since', async () => {
    const stored = await afterOneRun();
    const changed = { page: 1, items: [makeItem('a', { quantity: 2 })], invalid: [] };
    const unchanged = { page: 2, items: [], invalid: [], unchanged: [{ id: 'a', ...stored }] };
    stagePages(store, run, [changed], () => undefined);
    stagePages(store, run, [unchanged], () => undefined);
    // Read last as its old text: back to the old version, matched, and the run's own one gone.
    expect(quantities()).toEqual([1]);
    expect(commitRun(store, run, () => undefined)).toMatchObject({ items: 1, added: 0, updated: 0 });
  });

  it('gives way to a change read after it, in the same batch or a later one', async () => {
    const stored = await afterOneRun();
    const unchanged = { page: 1, items: [], invalid: [], unchanged: [{ id: 'a', ...stored }] };
    const changed = { page: 2, items: [makeItem('a', { quantity: 3 })], invalid: [] };
    stagePages(store, run, [unchanged, changed], () => undefined);
    expect(quantities()).toEqual([3]);
    stagePages(store, run, [unchanged], () => undefined);
    stagePages(store, run, [changed], () => undefined);
    expect(quantities()).toEqual([3]);
    expect(commitRun(store, run, () => undefined)).toMatchObject({ items: 1, added: 0, updated: 1 });
  });
});
