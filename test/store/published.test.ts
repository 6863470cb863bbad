import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/open.js';
import { openStore } from '../../src/store/open.js';
import { pruneRuns } from '../../src/store/prune.js';
import { feedsLag, markPublished, publishedRun } from '../../src/store/published.js';
import { listRuns } from '../../src/store/runs.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { commitItems, makeItem, openTempStore, tempDir } from './fixtures.js';

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

const runOf = (quantity: number) => commitItems(store, [[makeItem('a', { quantity }), makeItem('b')]]);

describe('the published run', () => {
  it('is null until feeds are published, then the run last marked, across reopening', async () => {
    const first = await runOf(1);
    expect(publishedRun(store)).toBeNull();
    expect(feedsLag(store)).toEqual({ published: null, latestComplete: first, lagging: true });

    markPublished(store, first);
    const second = await runOf(2);
    expect(feedsLag(store)).toEqual({ published: first, latestComplete: second, lagging: true });
    markPublished(store, second);
    store.close();
    store = openStore(store.path);
    expect(publishedRun(store)).toBe(second);
    expect(feedsLag(store)).toEqual({ published: second, latestComplete: second, lagging: false });
  });

  it('does not lag in a store with no complete run', async () => {
    expect(feedsLag(store)).toEqual({ published: null, latestComplete: null, lagging: false });
  });

  it('survives pruning, with every run after it, however few runs are kept', async () => {
    const runs = [await runOf(1), await runOf(2), await runOf(3), await runOf(4)];
    markPublished(store, runs[1] as number);
    const snapshot = [...snapshotItems(store, runs[1] as number)];

    pruneRuns(store, 1);

    expect(listRuns(store).map((r) => r.run)).toEqual(runs.slice(1));
    expect([...snapshotItems(store, runs[1] as number)]).toEqual(snapshot);
    markPublished(store, runs[3] as number);
    pruneRuns(store, 1);
    expect(listRuns(store).map((r) => r.run)).toEqual([runs[3]]);
  });
});
