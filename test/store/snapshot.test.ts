import { describe, expect, it } from 'vitest';
import { closeRemoved } from '../../src/store/candidates.js';
import { commitRun } from '../../src/store/commit.js';
import { diffRuns } from '../../src/store/diff-runs.js';
import { beginRun, latestCompleteRun } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { stagePages } from '../../src/store/staging.js';
import { commitItems, freshStorePerTest, makeItem } from './fixtures.js';

const sandbox = freshStorePerTest();

describe('snapshotItems', () => {
  it('gives each complete run its items as they were then, by id', async () => {
    const r1 = await commitItems(sandbox.store, [[makeItem('b'), makeItem('a')]]);
    const r2 = await commitItems(sandbox.store, [[makeItem('c')], [makeItem('a', { quantity: 4 })]]);
    expect([...snapshotItems(sandbox.store, r1)]).toEqual([makeItem('a'), makeItem('b')]);
    expect([...snapshotItems(sandbox.store, r2)]).toEqual([makeItem('a', { quantity: 4 }), makeItem('c')]);
  });

  it('shows nothing a run has written until it is complete, then all of it', async () => {
    const r1 = await commitItems(sandbox.store, [[makeItem('a'), makeItem('b')]]);
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    stagePages(
      sandbox.store,
      run,
      [{ page: 1, items: [makeItem('a', { title: 'renamed' }), makeItem('c')], invalid: [] }],
      () => undefined,
    );
    expect(await closeRemoved(sandbox.store, run)).toBe(1);

    expect(latestCompleteRun(sandbox.store)).toBe(r1);
    expect([...snapshotItems(sandbox.store, r1)]).toEqual([makeItem('a'), makeItem('b')]);

    expect(commitRun(sandbox.store, run, () => undefined)).toMatchObject({
      added: 1,
      updated: 1,
      removed: 1,
    });
    expect([...snapshotItems(sandbox.store, run)]).toEqual([
      makeItem('a', { title: 'renamed' }),
      makeItem('c'),
    ]);
    expect([...diffRuns(sandbox.store, r1, run)].map((c) => [c.change, c.id])).toEqual([
      ['updated', 'a'],
      ['removed', 'b'],
      ['added', 'c'],
    ]);
  });
});
