import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compareSnapshot, SHOP, syncEnv } from '../../bench/faults/harness.js';
import { CRASH_CHILD, runNode } from '../../bench/faults/processes.js';
import { ListingWatch } from '../../bench/faults/survivors.js';
import { truthOf } from '../../bench/faults/truth.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli } from '../helpers/cli.js';
import { expectHonestRun, syncWhileChurning } from '../helpers/moving-listing.js';
import { tempDir } from '../store/fixtures.js';

/**
 * The shop sells and lists items while a sync pages through it (issue 20, section 1): the cases measured
 * there, each run as users run it (the CLI against the simulator as a real server). The guarantee: an item
 * listed from the moment a run starts until it ends is in that run and is never reported added or removed;
 * what appears or disappears meanwhile is settled by the next run with a true change.
 */
const PER_PAGE = 40;
let sim: Simulator;
let temp: ReturnType<typeof tempDir>;

// A fresh shop for each case, so that each is the same whatever ran before it (churn changes the shop).
beforeEach(async () => {
  sim = await startSimulator({ items: 3000, seed: 20 });
  temp = tempDir('shop-sync-moving-');
});
afterEach(async () => {
  await sim.close();
  temp.cleanup();
});

function env(extra: Record<string, string> = {}): Record<string, string> {
  return { ...syncEnv(sim, temp.dir, PER_PAGE), ...extra };
}

const paths = () => shopPaths(temp.dir, SHOP);

async function quietSync(settings: Record<string, string>): Promise<number> {
  const result = await runCli(['sync', '--json'], settings);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { run: number }).run;
}

describe('a sync of a listing that moves while it is read', () => {
  it('a still listing (the control): every item, and the next sync reports nothing', async () => {
    const settings = env();
    const churned = await syncWhileChurning(sim, settings, {});
    // No change at all: the helper's "churn changed the listing" precondition is not this test's point.
    expect(churned.span.changes).toEqual([]);
    expect(churned.result.code).toBe(0);
    expect(churned.span.survivors.size).toBe(sim.truth().length);
    const second = await runCli(['sync', '--json'], settings);
    expect(JSON.parse(second.stdout)).toMatchObject({ added: 0, removed: 0, updated: 0 });
  });

  it('a listing that changes only ahead of the reader (the control): an honest run today', async () => {
    const settings = env({ SYNC_MAX_IN_FLIGHT: '1' });
    await quietSync(settings);
    const churned = await syncWhileChurning(sim, settings, { every: 2, deleteAhead: 1, insertAhead: 1 });
    await expectHonestRun(sim, paths(), settings, churned);
  });

  it.each(['1', '8'])(
    'first sync, 6 deletions near the front during the read (SYNC_MAX_IN_FLIGHT %s): no survivor missing',
    async (inFlight) => {
      const settings = env({ SYNC_MAX_IN_FLIGHT: inFlight });
      const churned = await syncWhileChurning(sim, settings, {
        from: 5,
        times: 1,
        deleteAt: [2, 6, 10, 14, 18, 22],
      });
      expect(churned.span.deleted.size).toBe(6);
      await expectHonestRun(sim, paths(), settings, churned);
    },
  );

  it.each(['1', '8'])(
    'first sync, one deletion behind the reader after every response (SYNC_MAX_IN_FLIGHT %s)',
    async (inFlight) => {
      const settings = env({ SYNC_MAX_IN_FLIGHT: inFlight });
      const churned = await syncWhileChurning(sim, settings, { deleteBehind: 1 });
      await expectHonestRun(sim, paths(), settings, churned);
    },
  );

  it('an item created before a resync started, shifted past the reader, is in that resync and reported added there', async () => {
    const settings = env({ SYNC_MAX_IN_FLIGHT: '1' });
    await quietSync(settings);
    // The first item of page 4; once pages 1-3 are read, a deletion at the front moves it into page 3.
    const [created] = sim.churnNow({ insertAt: [3 * PER_PAGE] });
    const churned = await syncWhileChurning(sim, settings, { from: 3, times: 1, deleteAt: [0] });
    expect(churned.span.survivors.has(created?.id as string)).toBe(true);
    await expectHonestRun(sim, paths(), settings, churned);
  });

  it('a resync under heavy churn (6 deletions after every response) reports no phantom removal', async () => {
    const settings = env();
    await quietSync(settings);
    const churned = await syncWhileChurning(sim, settings, { deleteBehind: 4, deleteAhead: 2 });
    await expectHonestRun(sim, paths(), settings, churned);
  });

  it('a filtered shop (f.shipping_to) with 3 deletions and 1 insertion per response', async () => {
    const config = path.join(temp.dir, 'shops.json');
    writeFileSync(config, JSON.stringify({ shops: { [SHOP]: { filters: { shipping_to: 'IT' } } } }));
    const settings = env({ SHOP_SYNC_CONFIG: config, SYNC_MAX_IN_FLIGHT: '1' });
    const query = 'f.shipping_to=IT';
    const first = await quietSync(settings);
    expect(first).toBe(1);
    const churned = await syncWhileChurning(sim, settings, { deleteBehind: 3, insertAhead: 1 }, { query });
    // Churn acted on the filtered listing the sync read.
    expect(churned.span.changes.every((change) => change.listing === 'newest|shipping_to=IT')).toBe(true);
    expect(churned.span.atStart.size).toBeLessThan(sim.truth().length);
    if (churned.result.code === 0) {
      await expectHonestRun(sim, paths(), settings, churned, query);
      return;
    }
    // A listing changing at its end after every answer may never show an end twice: the run then
    // fails, saying so, rather than guess; the snapshot stays the first run's, and a quiet sync settles it.
    expect(churned.result.stderr).toMatch(/The listing kept changing/);
    expect(churned.result.code).toBe(1);
    // The next sync resumes the failed run (items that vanished meanwhile may be in it); the one after
    // that reads the quiet listing afresh and must match it exactly.
    for (const _ of [1, 2]) expect((await runCli(['sync', '--json'], settings)).code).toBe(0);
    const listed = new Set(sim.listedIds(query));
    const truth = truthOf(sim.truth().filter((item) => listed.has(item.id)));
    expect(compareSnapshot(paths(), truth).problems).toEqual([]);
  });

  it('a first sync killed mid-read and resumed within SYNC_RESUME_WINDOW_MINUTES keeps the guarantee', async () => {
    const settings = env({ SYNC_MAX_IN_FLIGHT: '1' });
    // The span starts with the first attempt: the resumed run is the same run.
    const watch = ListingWatch.start(sim);
    const killed = await runNode(CRASH_CHILD, [], { ...settings, CRASH_AT: 'page-staged:1' });
    expect(killed.signal).toBe('SIGKILL');
    // Between the attempts the shop sold six items in the part the first attempt had read.
    sim.churnNow({ deleteAt: [1, 5, 9, 13, 17, 21] });
    // The resumed attempt reads a still listing: what it misses, it misses by stitching the two attempts.
    const churned = await syncWhileChurning(sim, settings, {}, { watch });
    expect(churned.summary?.run, 'the second attempt resumed the killed run').toBe(1);
    await expectHonestRun(sim, paths(), settings, churned);
  });
});
