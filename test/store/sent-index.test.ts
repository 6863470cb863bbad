import { describe, expect, it } from 'vitest';
import { commitRun } from '../../src/store/commit.js';
import { beginRun } from '../../src/store/run-records.js';
import { SentVersions } from '../../src/store/sent-index.js';
import { stagePages } from '../../src/store/staging.js';
import { freshStorePerTest, makeItem } from './fixtures.js';

const sandbox = freshStorePerTest();

/** Commits one run of `count` items, item `i` read from a text hashing as `i`, all but `unknown`. */
function commitRunOf(count: number, unknown: number): void {
  const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
  const items = Array.from({ length: count }, (_, i) => makeItem(`item-${i}`));
  const sent = items.map((_, i) => (i === unknown ? undefined : i));
  stagePages(sandbox.store, run, [{ page: 1, items, invalid: [], sent }], () => undefined);
  commitRun(sandbox.store, run, () => undefined);
}

describe('the texts of the current versions', () => {
  it("are found per page, in the page's order, for the elements sent as their version's very text", async () => {
    commitRunOf(12_001, 7);
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    const index = new SentVersions(sandbox.store, run);
    const page = Array.from({ length: 12_001 }, (_, i) => ({ id: `item-${12_000 - i}`, sent: 12_000 - i }));
    const found = index.versionsOf(page);
    expect(found).toHaveLength(12_001);
    expect(found.filter((version) => version === undefined)).toHaveLength(1);
    expect(found[12_000 - 7]).toBeUndefined();
    expect(found[0]).toMatchObject({ version: expect.any(Number), hash: expect.any(Number) });
    const again = index.versionsOf([
      { id: 'item-0', sent: 1 },
      { id: 'item-99999', sent: 0 },
      { id: 'item-0', sent: 0 },
    ]);
    expect(again).toEqual([undefined, undefined, found[12_000]]);
  });

  it("are not the versions of the run itself, nor of an id's closed versions", async () => {
    commitRunOf(3, -1);
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    const changed = makeItem('item-1', { quantity: 99 });
    stagePages(
      sandbox.store,
      run,
      [{ page: 1, items: [changed, makeItem('item-9')], invalid: [], sent: [1, 9] }],
      () => undefined,
    );
    const index = new SentVersions(sandbox.store, run);
    const found = index.versionsOf([0, 1, 9].map((i) => ({ id: `item-${i}`, sent: i })));
    expect(found.map((version) => version !== undefined)).toEqual([true, false, false]);
  });
});
