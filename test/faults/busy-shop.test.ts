import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compareSnapshot, SHOP, syncEnv } from '../../bench/faults/harness.js';
import { truthOf } from '../../bench/faults/truth.js';
import type { ChurnFault } from '../../src/simulator/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli } from '../helpers/cli.js';
import { expectHonestRun, syncWhileChurning } from '../helpers/moving-listing.js';
import { tempDir } from '../store/fixtures.js';

/**
 * A busy shop (issue 30): items sold and listed after every listing response, faster than a page of
 * overlap can absorb unless the overlap follows the drift. The rule the README states: a run completes
 * whenever the listing changes by at most a quarter of a page per response. Each case runs as users
 * run it (the CLI against the simulator as a real server, 5 ms a response): every run completes, with
 * every survivor and no phantom `added` or `removed`.
 */
const PER_PAGE = 40;
const QUERY = 'f.shipping_to=IT';
let sim: Simulator;
let temp: ReturnType<typeof tempDir>;

beforeEach(async () => {
  sim = await startSimulator({ items: 1500, seed: 30, faults: { latencyMs: 5 } });
  temp = tempDir('shop-sync-busy-');
});
afterEach(async () => {
  await sim.close();
  temp.cleanup();
});

type Kind = 'first sync' | 'resync' | 'filtered resync' | 'resync with items new since the last run';

function settingsFor(kind: Kind, inFlight: number): Record<string, string> {
  const settings = { ...syncEnv(sim, temp.dir, PER_PAGE), SYNC_MAX_IN_FLIGHT: String(inFlight) };
  if (kind !== 'filtered resync') return settings;
  const config = path.join(temp.dir, 'shops.json');
  writeFileSync(config, JSON.stringify({ shops: { [SHOP]: { filters: { shipping_to: 'IT' } } } }));
  return { ...settings, SHOP_SYNC_CONFIG: config };
}

const cases: [Kind, number, Partial<ChurnFault>][] = [
  ['first sync', 8, { deleteBehind: 1 }],
  ['first sync', 8, { deleteBehind: 2, insertBehind: 2 }],
  ['first sync', 1, { deleteBehind: 6 }],
  ['first sync', 64, { deleteBehind: 4, deleteAhead: 2, insertAhead: 4 }],
  ['resync', 8, { deleteBehind: 3, deleteAhead: 3 }],
  ['resync', 64, { deleteBehind: 6, insertBehind: 4 }],
  ['resync', 1, { deleteBehind: 2, insertAhead: 2 }],
  ['filtered resync', 8, { deleteBehind: 3, insertAhead: 1 }],
  ['filtered resync', 1, { deleteBehind: 4, insertBehind: 2 }],
  ['resync with items new since the last run', 8, { deleteBehind: 5, insertBehind: 1 }],
  ['resync with items new since the last run', 64, { deleteBehind: 1, insertBehind: 4 }],
];

describe('a busy shop completes (at most a quarter of a page changed per response)', () => {
  it.each(cases)(
    '%s, read-ahead %i, churn %o: every survivor, no phantom change',
    async (kind, inFlight, churn) => {
      const settings = settingsFor(kind, inFlight);
      const query = kind === 'filtered resync' ? QUERY : '';
      if (kind !== 'first sync') {
        const quiet = await runCli(['sync', '--json'], settings);
        if (quiet.code !== 0) throw new Error(`the quiet first sync failed: ${quiet.stderr}`);
      }
      if (kind === 'resync with items new since the last run') {
        const length = sim.listedIds(query).length;
        sim.churnNow({ insertAt: [0, 7, Math.floor(length / 2), length - 3] }, query);
      }
      const churned = await syncWhileChurning(sim, settings, churn, { query });
      await expectHonestRun(sim, shopPaths(temp.dir, SHOP), settings, churned, query);
    },
  );
});

/**
 * A listing that grows ahead of the reader by more than a page per response (issue 30): no reading can
 * reach its end. The run must not read on without bound: once the reading came no closer to the end for
 * the time budget (SYNC_RETRY_BUDGET_SECONDS), it fails with LISTING_MOVED, one sentence, the previous
 * snapshot and feeds as they were. A listing that stops growing within the budget is read to its end.
 */
describe('a listing that outruns the reader ends within the time budget', () => {
  const GROWTH = { insertAhead: 60 };
  const settings = () => ({ ...syncEnv(sim, temp.dir, 20), SYNC_RETRY_BUDGET_SECONDS: '6' });

  it('fails with LISTING_MOVED when it keeps growing, the previous data and feeds intact', async () => {
    const env = settings();
    expect((await runCli(['sync', '--json'], env)).code).toBe(0);
    const paths = shopPaths(temp.dir, SHOP);
    const listed = new Set(sim.listedIds());
    const before = truthOf(sim.truth().filter((item) => listed.has(item.id)));
    const feeds = [paths.inventoryCsv, paths.changesCsv].map((file) => readFileSync(file));
    const churned = await syncWhileChurning(sim, env, GROWTH);
    const lines = churned.result.stderr.trim().split('\n');
    expect(lines.at(-1)).toMatch(
      /^shop-sync: The listing grew faster than it could be read: for 6 s \(the retry budget, SYNC_RETRY_BUDGET_SECONDS\) the reading came no closer to its end, \d+ items ahead, .*the previous snapshot and feeds stay, and the next sync tries again\.$/,
    );
    expect(churned.result.code).toBe(1);
    expect(compareSnapshot(paths, before).problems).toEqual([]);
    expect([paths.inventoryCsv, paths.changesCsv].map((file) => readFileSync(file))).toEqual(feeds);
  });

  it('completes when it stops growing within the budget', async () => {
    const env = settings();
    const churned = await syncWhileChurning(sim, env, { ...GROWTH, times: 40 });
    await expectHonestRun(sim, shopPaths(temp.dir, SHOP), env, churned);
  });
});
