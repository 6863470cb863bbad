import { describe, expect, it } from 'vitest';
import { pruneRuns } from '../../src/store/prune-runs.js';
import { feedsLag, markPublished, publishedRun } from '../../src/store/published.js';
import { listRuns } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { commitItems, freshStorePerTest, makeItem } from './fixtures.js';

const sandbox = freshStorePerTest();

const runOf = (quantity: number) =>
  commitItems(sandbox.store, [[makeItem('a', { quantity }), makeItem('b')]]);

describe('the published run', () => {
  it('is null until feeds are published, then the run last marked, across reopening', async () => {
    const first = await runOf(1);
    expect(publishedRun(sandbox.store)).toBeNull();
    expect(feedsLag(sandbox.store)).toEqual({ published: null, latestComplete: first, lagging: true });

    markPublished(sandbox.store, first);
    const second = await runOf(2);
    expect(feedsLag(sandbox.store)).toEqual({ published: first, latestComplete: second, lagging: true });
    markPublished(sandbox.store, second);
    sandbox.reopen();
    expect(publishedRun(sandbox.store)).toBe(second);
    expect(feedsLag(sandbox.store)).toEqual({ published: second, latestComplete: second, lagging: false });
  });

  it('does not lag in a store with no complete run', async () => {
    expect(feedsLag(sandbox.store)).toEqual({ published: null, latestComplete: null, lagging: false });
  });

  it('survives pruning, with every run after it, however few runs are kept', async () => {
    const runs = [await runOf(1), await runOf(2), await runOf(3), await runOf(4)];
    markPublished(sandbox.store, runs[1] as number);
    const snapshot = [...snapshotItems(sandbox.store, runs[1] as number)];

    pruneRuns(sandbox.store, 1);

    expect(listRuns(sandbox.store).map((r) => r.run)).toEqual(runs.slice(1));
    expect([...snapshotItems(sandbox.store, runs[1] as number)]).toEqual(snapshot);
    markPublished(sandbox.store, runs[3] as number);
    pruneRuns(sandbox.store, 1);
    expect(listRuns(sandbox.store).map((r) => r.run)).toEqual([runs[3]]);
  });
});
