import { writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ListingWatch, runProblems, settlingProblems, viewRun } from '../../bench/faults/survivors.js';
import { findShop, loadConfig } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/log.js';
import type { ChurnFault, Simulator } from '../../src/simulator/index.js';
import { startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runSync } from '../../src/sync/index.js';
import { simEnv, tempDir } from '../store/fixtures.js';

/**
 * The moving-listing guarantee over drawn shops, page sizes, read-ahead (SYNC_MAX_IN_FLIGHT 1 to 64) and
 * churn: an item listed from the moment a run starts until it ends is in that run, never reported removed,
 * never reported added unless the run before lacked it; the next run of the quiet listing reports only
 * items that appeared or disappeared meanwhile. A run may instead fail honestly (the contract lets a run
 * that cannot verify its read within its budget fail and say so); it never claims `complete` with less.
 * The sync runs in this process (the entry the CLI and the worker call) against the simulator as a real
 * HTTP server, so that each draw costs tens of milliseconds rather than a process start.
 */
const churnArb: fc.Arbitrary<Partial<ChurnFault>> = fc.record({
  from: fc.integer({ min: 1, max: 6 }),
  every: fc.integer({ min: 1, max: 3 }),
  times: fc.constantFrom(0, 1, 3),
  deleteBehind: fc.integer({ min: 0, max: 4 }),
  deleteAhead: fc.integer({ min: 0, max: 2 }),
  insertBehind: fc.integer({ min: 0, max: 2 }),
  insertAhead: fc.integer({ min: 0, max: 2 }),
});

const caseArb = fc.record({
  items: fc.integer({ min: 30, max: 250 }),
  seed: fc.nat({ max: 2 ** 30 }),
  perPage: fc.integer({ min: 5, max: 30 }),
  maxInFlight: fc.integer({ min: 1, max: 64 }),
  filtered: fc.boolean(),
  /** Resyncs: items created between the runs (at random positions), before the churned run starts. */
  createdBefore: fc.array(fc.nat({ max: 10_000 }), { maxLength: 4 }),
  churn: churnArb,
});

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

/** How the drawn runs ended, to show that the property was not met by failing every run. */
const outcomes = { complete: 0, failed: 0 };

async function syncIn(sim: Simulator, dir: string, c: Case): Promise<number> {
  const env: Record<string, string> = {
    ...simEnv(sim, dir),
    SYNC_PER_PAGE: String(c.perPage),
    SYNC_MAX_IN_FLIGHT: String(c.maxInFlight),
    SYNC_RETRY_BUDGET_SECONDS: '20',
    // The churn deletes a good part of a small shop for real; the property is about the reading, not the guard.
    SYNC_MAX_REMOVED: 'none',
  };
  if (c.filtered) {
    const file = path.join(dir, 'shops.json');
    writeFileSync(file, JSON.stringify({ shops: { shop: { filters: { shipping_to: 'IT' } } } }));
    env.SHOP_SYNC_CONFIG = file;
  }
  const config = loadConfig(env);
  const summary = await runSync(findShop(config, 'shop'), { config, log: silentLogger() });
  return summary.run;
}

/** One drawn case: an optional quiet first sync, a sync through churn, a quiet sync; the broken promises. */
async function brokenPromises(c: Case, resync: boolean): Promise<string[]> {
  const sim = await startSimulator({ items: c.items, seed: c.seed });
  const temp = tempDir('shop-sync-moving-prop-');
  const query = c.filtered ? 'f.shipping_to=IT' : '';
  try {
    if (resync) {
      await syncIn(sim, temp.dir, c);
      const length = sim.listedIds(query).length;
      sim.churnNow({ insertAt: c.createdBefore.map((at) => at % (length + 1)) }, query);
    }
    const watch = ListingWatch.start(sim, query);
    sim.setFaults({ churn: c.churn });
    let run: number;
    try {
      run = await syncIn(sim, temp.dir, c);
    } catch (error) {
      // An honest failure: the run claimed nothing.
      outcomes.failed += 1;
      if (!(error instanceof Error) || error.message === '') return ['the sync failed without a sentence'];
      return [];
    } finally {
      sim.setFaults({ churn: null });
    }
    outcomes.complete += 1;
    const span = watch.finish();
    const paths = shopPaths(temp.dir, 'shop');
    const problems = runProblems(span, viewRun(paths, run));
    const next = await syncIn(sim, temp.dir, c);
    return [...problems, ...settlingProblems(span, viewRun(paths, next))];
  } finally {
    await sim.close();
    temp.cleanup();
  }
}

afterAll(() => {
  // Most draws are light enough for any reader to verify: a property met by failing every run proves nothing.
  expect(outcomes.complete).toBeGreaterThan(outcomes.failed);
});

describe('a sync of a listing that moves while it is read (property)', () => {
  it('first syncs: every survivor is in the run', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        expect(await brokenPromises(c, false)).toEqual([]);
      }),
      // Bounded in time: no shrinking (a failure is reported as drawn), and a time limit on the runs.
      { numRuns: 15, endOnFailure: true, interruptAfterTimeLimit: 40_000 },
    );
  }, 90_000);

  it('resyncs: every survivor is in the run, none reported removed or added', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        expect(await brokenPromises(c, true)).toEqual([]);
      }),
      { numRuns: 15, endOnFailure: true, interruptAfterTimeLimit: 40_000 },
    );
  }, 90_000);
});
