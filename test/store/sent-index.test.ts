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
  it('loads every version that knows its text, however many slices it takes', async () => {
    commitRunOf(12_001, 7);
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    const index = await SentVersions.load(sandbox.store, run);
    const found = Array.from({ length: 12_001 }, (_, i) => index.versionOf(`item-${i}`, i) !== undefined);
    expect(found.filter((known) => !known)).toHaveLength(1);
    expect(found[7]).toBe(false);
    expect(index.versionOf('item-0', 1)).toBeUndefined();
    expect(index.versionOf('item-0', 0)).toMatchObject({
      version: expect.any(Number),
      hash: expect.any(Number),
    });
  });

  it('loads no more than its limit, by id, and finds the versions of the ids after it in the store', async () => {
    commitRunOf(12_001, 11_000);
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    const bounded = await SentVersions.load(sandbox.store, run, 6_000);
    const whole = await SentVersions.load(sandbox.store, run);
    // Whole slices of 5,000: the limit is reached within the second.
    expect(bounded.size).toBe(10_000);
    const ids = Array.from({ length: 12_001 }, (_, i) => `item-${i}`);
    for (const [i, id] of ids.entries()) {
      expect(bounded.versionOf(id, i)).toEqual(whole.versionOf(id, i));
      expect(bounded.versionOf(id, i + 1)).toBeUndefined();
    }
    expect(ids.filter((id, i) => bounded.versionOf(id, i) !== undefined)).toHaveLength(12_000);
    expect(bounded.versionOf('item-99999', 0)).toBeUndefined();
  });
});
