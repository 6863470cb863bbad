import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { diffRuns } from '../../src/diff.js';
import { commitRun } from '../../src/store/commit.js';
import type { Store } from '../../src/store/open.js';
import { beginRun, latestCompleteRun } from '../../src/store/runs.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { closeRemoved, stagePages } from '../../src/store/staging.js';
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

describe('snapshotItems', () => {
  it('gives each complete run its items as they were then, by id', async () => {
    const r1 = await commitItems(store, [[makeItem('b'), makeItem('a')]]);
    const r2 = await commitItems(store, [[makeItem('c')], [makeItem('a', { quantity: 4 })]]);
    expect([...snapshotItems(store, r1)]).toEqual([makeItem('a'), makeItem('b')]);
    expect([...snapshotItems(store, r2)]).toEqual([makeItem('a', { quantity: 4 }), makeItem('c')]);
  });

  it('shows nothing a run has written until it is complete, then all of it', async () => {
    const r1 = await commitItems(store, [[makeItem('a'), makeItem('b')]]);
    const { run } = beginRun(store, { query: 'q', resumeWindowMinutes: 0 });
    stagePages(
      store,
      run,
      [{ page: 1, items: [makeItem('a', { title: 'renamed' }), makeItem('c')], invalid: [] }],
      () => undefined,
    );
    expect(await closeRemoved(store, run)).toBe(1);

    expect(latestCompleteRun(store)).toBe(r1);
    expect([...snapshotItems(store, r1)]).toEqual([makeItem('a'), makeItem('b')]);

    expect(commitRun(store, run, () => undefined)).toMatchObject({ added: 1, updated: 1, removed: 1 });
    expect([...snapshotItems(store, run)]).toEqual([makeItem('a', { title: 'renamed' }), makeItem('c')]);
    expect([...diffRuns(store, r1, run)].map((c) => [c.change, c.id])).toEqual([
      ['updated', 'a'],
      ['removed', 'b'],
      ['added', 'c'],
    ]);
  });
});
