import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_IN_FLIGHT } from '../../src/api/listing/page-by-page.js';
import { findShop } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/log.js';
import { type ListingArrival, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/open.js';
import { shopPaths } from '../../src/store/paths.js';
import { latestCompleteRun } from '../../src/store/run-records.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { runSync, type SyncSummary } from '../../src/sync/index.js';
import { simConfig, tempDir, truthById, withoutRaw } from '../store/fixtures.js';

/**
 * A resync reads ahead no further than where the shop's last complete run ended, until an answer shows
 * more: with SYNC's defaults (per_page 100) against the simulator, whose listing requests are recorded as
 * they arrive.
 */
let sim: Simulator | undefined;
const temps: ReturnType<typeof tempDir>[] = [];

afterEach(async () => {
  await sim?.close();
  sim = undefined;
  for (const temp of temps.splice(0)) temp.cleanup();
});

async function simulator(items: number): Promise<Simulator> {
  sim = await startSimulator({ items, seed: 17 });
  return sim;
}

/** A shop of its own (its own data directory) reading `market`. */
function shopOf(market: Simulator): {
  sync: (acceptRemovals?: boolean) => Promise<SyncSummary>;
  dir: string;
} {
  const temp = tempDir('shop-sync-listed-before-');
  temps.push(temp);
  const config = simConfig(market, temp.dir);
  return {
    sync: (acceptRemovals = false) =>
      runSync(findShop(config, 'shop'), { config, log: silentLogger(), acceptRemovals }),
    dir: temp.dir,
  };
}

/** The listing requests `sync` sent, as the simulator saw them arrive. */
async function requestsOf(
  market: Simulator,
  sync: () => Promise<SyncSummary>,
): Promise<{ summary: SyncSummary; asked: ListingArrival[] }> {
  const before = market.listingArrivals().length;
  const summary = await sync();
  return { summary, asked: market.listingArrivals().slice(before) };
}

/** Where a request's window starts (offset from 0). */
const startOf = (arrival: ListingArrival) => (arrival.page - 1) * arrival.perPage;

/** The latest complete snapshot of the shop under `dir` is the simulator's whole catalogue. */
function expectWhole(market: Simulator, dir: string): void {
  const store = openStore(shopPaths(dir, 'shop').store);
  try {
    const run = latestCompleteRun(store) ?? 0;
    expect(withoutRaw(snapshotItems(store, run))).toEqual(truthById(market));
  } finally {
    store.close();
  }
}

describe('a resync told how many items the last complete run listed', () => {
  it('asks no window past where an unchanged listing ended but the ones that confirm its end', async () => {
    const market = await simulator(2_000);
    const shop = shopOf(market);
    await shop.sync();
    const { summary, asked } = await requestsOf(market, () => shop.sync());
    expect(summary).toMatchObject({ status: 'complete', items: 2_000, added: 0, removed: 0 });
    expectWhole(market, shop.dir);
    // Past the last item (offset 1,999), only the pages after two windows that ended there, at their
    // page sizes, each asked twice, confirm that nothing follows it.
    const past = asked.filter((arrival) => startOf(arrival) >= 2_000);
    const afterTheLast = (arrival: ListingArrival) => (arrival.page - 2) * arrival.perPage <= 1_999;
    expect(past.filter((arrival) => !afterTheLast(arrival))).toEqual([]);
    expect(past.length).toBeLessThanOrEqual(4);
  });

  it('reads a listing that grew far beyond it whole, with the requests and read-ahead of a first sync', async () => {
    const market = await simulator(50);
    const shop = shopOf(market);
    await shop.sync();
    market.mutate({ add: 2_950 });
    // Every answer waits a little, so that requests read ahead are in flight together when they arrive.
    market.setFaults({ latencyMs: 20 });
    const grown = await requestsOf(market, () => shop.sync());
    expect(grown.summary).toMatchObject({ status: 'complete', items: 3_000, added: 2_950 });
    expectWhole(market, shop.dir);
    const first = await requestsOf(market, () => shopOf(market).sync());
    expect(first.summary).toMatchObject({ status: 'complete', items: 3_000 });
    // Windows read ahead past the end vary with how many were in flight when it showed: up to a slot limit.
    expect(grown.asked.length).toBeLessThanOrEqual(first.asked.length + DEFAULT_MAX_IN_FLIGHT);
    // Past the 50 items of the last run, windows were read ahead together, as a first sync reads them
    // (one at a time, an answer may still be closing on the server as the next request arrives: two).
    const beyond = grown.asked.filter((arrival) => startOf(arrival) > 50);
    expect(Math.max(...beyond.map((arrival) => arrival.concurrency))).toBeGreaterThan(2);
  });

  it('reads a listing that shrank whole', async () => {
    const market = await simulator(2_000);
    const shop = shopOf(market);
    await shop.sync();
    market.mutate({ remove: 700 });
    const shrunk = await shop.sync(true);
    expect(shrunk).toMatchObject({ status: 'complete', items: 1_300, removed: 700 });
    expectWhole(market, shop.dir);
  });
});
