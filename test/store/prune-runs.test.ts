import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { diffRuns } from '../../src/store/diff-runs.js';
import type { Store } from '../../src/store/open.js';
import { pruneRuns } from '../../src/store/prune-runs.js';
import { beginRun, failRun, listRuns } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { commitItems, makeItem, openTempStore, tempDir } from './fixtures.js';

let temp: ReturnType<typeof tempDir>;
let store: Store;
beforeEach(() => {
  temp = tempDir();
  store = openTempStore(temp.dir);
});
afterEach(async () => {
  store.close();
  temp.cleanup();
});

/** Six runs in which items change, vanish, come back, and one that never changes. */
async function history(): Promise<number[]> {
  const runs: number[] = [];
  const steady = makeItem('steady');
  runs.push(await commitItems(store, [[steady, makeItem('a'), makeItem('b')]]));
  runs.push(await commitItems(store, [[steady, makeItem('a', { quantity: 2 }), makeItem('b')]]));
  const failed = beginRun(store, { query: 'q', resumeWindowMinutes: 0 }).run;
  failRun(store, failed, 'HTTP 503');
  runs.push(await commitItems(store, [[steady, makeItem('a', { quantity: 2 })]]));
  runs.push(await commitItems(store, [[steady, makeItem('a', { quantity: 3 }), makeItem('c')]]));
  runs.push(
    await commitItems(store, [[steady, makeItem('a', { quantity: 3 }), makeItem('b'), makeItem('c')]]),
  );
  runs.push(await commitItems(store, [[steady, makeItem('b', { title: 'new' }), makeItem('c')]]));
  return runs;
}

const snapshot = (run: number) => [...snapshotItems(store, run)];
const diff = (from: number, to: number) => [...diffRuns(store, from, to)];

describe('pruneRuns', () => {
  it('keeps the snapshots and diffs of the kept runs exactly as they were', async () => {
    const runs = await history();
    const kept = runs.slice(-3);
    const pairs = kept.flatMap((from) => kept.filter((to) => to >= from).map((to) => [from, to] as const));
    const snapshotsBefore = kept.map(snapshot);
    const diffsBefore = pairs.map(([from, to]) => diff(from, to));
    const versionsBefore = store.db.prepare('SELECT count(*) FROM item_versions').pluck().get() as number;

    const result = pruneRuns(store, 3);

    expect(result.runs).toEqual([runs[0], runs[1], (runs[1] as number) + 1, runs[2]]);
    expect(result.versions).toBeGreaterThan(0);
    expect(store.db.prepare('SELECT count(*) FROM item_versions').pluck().get()).toBe(
      versionsBefore - result.versions,
    );
    expect(listRuns(store).map((r) => r.run)).toEqual(kept);
    expect(kept.map(snapshot)).toEqual(snapshotsBefore);
    expect(pairs.map(([from, to]) => diff(from, to))).toEqual(diffsBefore);
    expect(() => diff(runs[0] as number, kept[0] as number)).toThrow(UsageError);
  });

  it('does nothing when there are no more complete runs than asked to keep', async () => {
    const runs = await history();
    expect(pruneRuns(store, runs.length)).toEqual({ runs: [], versions: 0 });
    expect(listRuns(store)).toHaveLength(runs.length + 1);
  });

  it('keeps a run still in progress and lets the next commit build on the kept versions', async () => {
    await history();
    const { run } = beginRun(store, { query: 'q', resumeWindowMinutes: 60 });
    pruneRuns(store, 1);
    expect(listRuns(store).map((r) => r.status)).toEqual(['complete', 'running']);
    const last = await commitItems(store, [[makeItem('steady'), makeItem('c')]]);
    expect(last).toBeGreaterThan(run);
    expect(diff(last - 2, last).map((c) => [c.change, c.id])).toEqual([['removed', 'b']]);
  });

  it('refuses to keep fewer than one run', () => {
    expect(() => pruneRuns(store, 0)).toThrow(UsageError);
  });
});
