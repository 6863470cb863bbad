import { describe, expect, it } from 'vitest';
import { commitRun } from '../../src/store/commit.js';
import { diffRuns } from '../../src/store/diff-runs.js';
import {
  beginRun,
  discardUnfinishedRuns,
  failRun,
  getRun,
  latestCompleteRun,
  listRuns,
  previousCompleteRun,
} from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { stagePages } from '../../src/store/staging.js';
import { commitItems, freshStorePerTest, makeItem } from './fixtures.js';

const sandbox = freshStorePerTest();

const versionCount = () => sandbox.store.db.prepare('SELECT count(*) FROM item_versions').pluck().get();
const ids = (run: number) => [...snapshotItems(sandbox.store, run)].map((i) => i.id);

describe('runs', () => {
  it('a failed run is never the latest snapshot, retires nothing and is skipped by previousCompleteRun', async () => {
    const r1 = await commitItems(sandbox.store, [[makeItem('a'), makeItem('b')]]);
    const { run: failed } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    stagePages(
      sandbox.store,
      failed,
      [{ page: 1, items: [makeItem('a', { quantity: 3 })], invalid: [] }],
      () => undefined,
    );
    failRun(sandbox.store, failed, 'HTTP 503');
    const r3 = await commitItems(sandbox.store, [[makeItem('a'), makeItem('b')]]);
    expect(latestCompleteRun(sandbox.store)).toBe(r3);
    expect(previousCompleteRun(sandbox.store, r3)).toBe(r1);
    expect(listRuns(sandbox.store).map((r) => [r.run, r.status])).toEqual([
      [r1, 'complete'],
      [failed, 'failed'],
      [r3, 'complete'],
    ]);
    expect([...diffRuns(sandbox.store, r1, r3)]).toEqual([]);
    expect(versionCount()).toBe(2);
  });

  it('resumes the latest interrupted run within the window, from the page after its checkpoint', () => {
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 60 });
    stagePages(sandbox.store, run, [{ page: 1, items: [makeItem('a')], invalid: [] }], () => undefined);
    stagePages(sandbox.store, run, [{ page: 2, items: [makeItem('b')], invalid: [] }], () => undefined);
    const resumed = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 60 });
    expect(resumed).toEqual({ run, startPage: 3, resumed: true });
    commitRun(sandbox.store, run, () => undefined);
    expect(ids(run)).toEqual(['a', 'b']);
  });

  it('keeps each attempt of a resumed run: first start, resumption, and why each earlier attempt stopped', () => {
    const t = (minute: number) => new Date(Date.UTC(2026, 10, 25, 10, minute));
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 60, now: t(0) });
    stagePages(
      sandbox.store,
      run,
      [{ page: 1, items: [makeItem('a')], invalid: [], checkpoint: '{"offset":1}' }],
      () => undefined,
      { now: t(1) },
    );
    failRun(sandbox.store, run, 'HTTP 503 for page 2.', t(2), 'MARKETPLACE_UNREACHABLE');
    const second = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 60, now: t(3) });
    expect(second).toEqual({ run, startPage: 2, resumed: true, checkpoint: '{"offset":1}' });
    // The second attempt dies without a word (killed): the third still says so.
    const third = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 60, now: t(5) });
    expect(third.resumed).toBe(true);
    commitRun(sandbox.store, run, () => undefined, t(6));
    expect(getRun(sandbox.store, run)).toMatchObject({
      status: 'complete',
      started_at: t(0).toISOString(),
      resumed_at: t(5).toISOString(),
      finished_at: t(6).toISOString(),
      attempts: 3,
      error: null,
      earlier_errors: [
        { at: t(2).toISOString(), code: 'MARKETPLACE_UNREACHABLE', message: 'HTTP 503 for page 2.' },
        { at: t(3).toISOString(), code: 'INTERRUPTED', message: 'interrupted' },
      ],
    });
  });

  it('starts over, marking the old run failed, when it is too old, the query differs or resuming is off', async () => {
    const old = beginRun(sandbox.store, {
      query: 'q',
      resumeWindowMinutes: 60,
      now: new Date(Date.now() - 61 * 60_000),
    });
    stagePages(sandbox.store, old.run, [{ page: 1, items: [makeItem('a')], invalid: [] }], () => undefined, {
      now: new Date(Date.now() - 61 * 60_000),
    });
    const fresh = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 60 });
    expect(fresh).toEqual({ run: old.run + 1, startPage: 1, resumed: false });
    expect(getRun(sandbox.store, old.run)?.status).toBe('failed');
    await discardUnfinishedRuns(sandbox.store, fresh.run);
    expect(
      sandbox.store.db.prepare('SELECT count(*) FROM run_matched WHERE run = ?').pluck().get(old.run),
    ).toBe(0);
    expect(
      sandbox.store.db
        .prepare('SELECT count(*) FROM item_versions WHERE valid_from_run = ?')
        .pluck()
        .get(old.run),
    ).toBe(0);

    const otherQuery = beginRun(sandbox.store, { query: 'other page size', resumeWindowMinutes: 60 });
    expect(otherQuery.resumed).toBe(false);
    const disabled = beginRun(sandbox.store, { query: 'other page size', resumeWindowMinutes: 0 });
    expect(disabled.resumed).toBe(false);
    expect(listRuns(sandbox.store).filter((r) => r.status === 'running')).toHaveLength(1);
  });
});

describe('cleaning up after runs that will not resume', () => {
  it('deletes what a failed run wrote, reopens what it closed, and keeps its row and error', async () => {
    const r1 = await commitItems(sandbox.store, [[makeItem('a'), makeItem('b')]]);
    const { run: failed } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    stagePages(
      sandbox.store,
      failed,
      [{ page: 1, items: [makeItem('a', { quantity: 9 }), makeItem('new')], invalid: [] }],
      () => undefined,
    );
    failRun(sandbox.store, failed, 'HTTP 503');
    const rows = (run: number) =>
      sandbox.store.db
        .prepare(
          `SELECT (SELECT count(*) FROM item_versions WHERE valid_from_run = @run OR valid_to_run = @run)
                + (SELECT count(*) FROM run_matched WHERE run = @run)`,
        )
        .pluck()
        .get({ run }) as number;
    expect(rows(failed)).toBeGreaterThan(0);

    const next = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    expect(await discardUnfinishedRuns(sandbox.store, next.run)).toEqual([failed]);
    expect(rows(failed)).toBe(0);
    expect(getRun(sandbox.store, failed)).toMatchObject({ status: 'failed', error: 'HTTP 503' });
    expect([...snapshotItems(sandbox.store, r1)]).toEqual([makeItem('a'), makeItem('b')]);
    expect(await discardUnfinishedRuns(sandbox.store, next.run)).toEqual([]);
  });

  it('refuses to complete a run while another unfinished run still has versions', () => {
    const { run: failed } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    stagePages(sandbox.store, failed, [{ page: 1, items: [makeItem('a')], invalid: [] }], () => undefined);
    failRun(sandbox.store, failed, 'interrupted');
    const { run } = beginRun(sandbox.store, { query: 'q', resumeWindowMinutes: 0 });
    expect(() => commitRun(sandbox.store, run, () => undefined)).toThrow(
      `run ${failed} is unfinished and its versions are not discarded; run ${run} cannot complete`,
    );
    expect(latestCompleteRun(sandbox.store)).toBeNull();
  });
});
