import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compareSnapshot, SHOP, syncEnv } from '../../bench/faults/harness.js';
import { truthOf } from '../../bench/faults/truth.js';
import { type Faults, NO_FAULTS, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../store/fixtures.js';

/**
 * Whole syncs, run as users run them, against marketplaces that misbehave in each way the exactness
 * defects were seen: the sync either exits 0 with exactly the marketplace's items, or exits 1 with one
 * sentence and the previous data untouched. Never exit 0 with less.
 */
let sim: Simulator;
let temp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  sim = await startSimulator({ items: 1200, seed: 31 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-hostile-');
  sim.setFaults(NO_FAULTS);
});
afterEach(() => temp.cleanup());

async function syncThrough(faults: Partial<Faults>, perPage = 40, extra: Record<string, string> = {}) {
  sim.setFaults({ ...NO_FAULTS, ...faults });
  const result = await runCli(['sync', '--json'], { ...syncEnv(sim, temp.dir, perPage), ...extra });
  sim.setFaults(NO_FAULTS);
  return result;
}

function exactly(): string[] {
  return compareSnapshot(shopPaths(temp.dir, SHOP), truthOf(sim.truth())).problems;
}

describe('a sync through a hostile marketplace', () => {
  it('reads every item when pages leave their last items out mid-listing, and says how many it re-read', async () => {
    const result = await syncThrough({ lossyShortPageRate: 0.05 }, 40, { LOG_LEVEL: 'info' });
    expect(result.code).toBe(0);
    expect(exactly()).toEqual([]);
    expect(sim.stats().faultsInjected.lossyShortPage).toBeGreaterThan(0);
    const complete = result.stderr
      .split('\n')
      .filter((line) => line.includes('"sync complete"'))
      .map((line) => JSON.parse(line) as { rereads: number });
    expect(complete[0]?.rereads).toBeGreaterThan(0);
  });

  it('does not believe a one-off 404, 204 or empty page in the middle of the listing', async () => {
    const result = await syncThrough({ falseEndPages: [3], falseEndRate: 0.05 });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).items).toBe(sim.truth().length);
    expect(exactly()).toEqual([]);
  });

  it('gets every item right through every transient fault at once', async () => {
    sim.mutate({ prices: 20, quantities: 20, add: 5, remove: 5, representation: 20 });
    const result = await syncThrough({
      rate429: 0.04,
      rate5xx: 0.04,
      dropRate: 0.03,
      malformedRate: 0.03,
      shortPageRate: 0.1,
      lossyShortPageRate: 0.04,
      falseEndRate: 0.03,
      refreshDeadEnd: true,
    });
    expect(result.code).toBe(0);
    expect(exactly()).toEqual([]);
  });

  it('fails within the retry budget when a response drips, keeping the previous data', async () => {
    expect((await syncThrough({})).code).toBe(0);
    const inventory = readFileSync(shopPaths(temp.dir, SHOP).inventoryCsv, 'utf8');
    const started = Date.now();
    const result = await syncThrough({ dripMs: 500 }, 40, { SYNC_RETRY_BUDGET_SECONDS: '2' });
    const elapsedMs = Date.now() - started;
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(
      /^shop-sync: .*(deadline|did not complete|within)/,
    );
    // A correctness bound, not a speed check: without a total deadline this sync never ends.
    expect(elapsedMs).toBeLessThan(30_000);
    expect(readFileSync(shopPaths(temp.dir, SHOP).inventoryCsv, 'utf8')).toBe(inventory);
    expect(exactly()).toEqual([]);
  });

  it('refuses a marketplace that ignores page, in one sentence, keeping the previous data', async () => {
    expect((await syncThrough({})).code).toBe(0);
    const result = await syncThrough({ ignorePage: true });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/ignore the page parameter/);
    expect(exactly()).toEqual([]);
  });
});
