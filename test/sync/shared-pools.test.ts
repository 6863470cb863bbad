import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AppConfig, findShop, loadConfig } from '../../src/config/app-config.js';
import { InterruptedError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { type Fleet, startFleet } from '../../src/simulator/index.js';
import { runSync, SharedPools, type SyncDeps } from '../../src/sync/index.js';
import { configFolder, simulatorShopLines } from '../helpers/config-files.js';
import { tempDir } from '../store/fixtures.js';

const SHOPS = 4;

let fleet: Fleet;
let temp: ReturnType<typeof tempDir>;
let file: string;

beforeAll(async () => {
  fleet = await startFleet({ items: 60, seed: 12, defaultPerPage: 20 }, SHOPS);
});
afterAll(() => fleet.close());
beforeEach(() => {
  temp = tempDir('shop-sync-shared-pools-');
  const shops = fleet.shops.flatMap((shop) =>
    simulatorShopLines(shop, `shop-${shop.index}`, ['per_page: 20']),
  );
  file = configFolder('shop-sync-shared-pools-config-').file(
    'shops.yaml',
    [`data_dir: ${temp.dir}`, 'shops:', ...shops].join('\n'),
  );
  fleet.setFaults({ latencyMs: 0 });
});
afterEach(() => temp.cleanup());

/** The fleet's shops, each sync keeping at most `maxInFlight` listing requests in flight. */
const configWith = (maxInFlight: number): AppConfig =>
  loadConfig({ SHOP_SYNC_CONFIG: file, SYNC_MAX_IN_FLIGHT: String(maxInFlight) });

const sync = (config: AppConfig, shop: string, extra: Partial<SyncDeps>) =>
  runSync(findShop(config, shop), { config, log: silentLogger(), ...extra });

describe('syncs of one process sharing its pools', () => {
  it('connect to the marketplace once, not once per sync', async () => {
    // One request in flight at a time, and one connection more for a login: a pool of 2. Nothing is
    // aborted, so no connection is ever replaced.
    const config = configWith(1);
    const pools = new SharedPools(1);
    const before = fleet.stats().connections;
    try {
      for (const name of Object.keys(config.shops)) {
        expect(await sync(config, name, { pools })).toMatchObject({ status: 'complete', items: 60 });
      }
    } finally {
      await pools.close();
    }
    // Each sync on its own opens at least one connection of its own, and closes it at its end.
    const connections = fleet.stats().connections - before;
    expect(connections).toBeLessThanOrEqual(2);
    expect(connections).toBeLessThan(SHOPS);
  });

  it('leave them to the next sync when one is stopped with requests in flight, and close them at the end', async () => {
    const config = configWith(4);
    const pools = new SharedPools(1);
    try {
      const stop = new AbortController();
      // Slow answers: the sync is stopped while it reads ahead.
      fleet.setFaults({ latencyMs: 200 });
      const stopped = sync(config, 'shop-1', {
        pools,
        signal: stop.signal,
        onPoint: (point) => {
          if (point === 'page-staged') stop.abort();
        },
      });
      await expect(stopped).rejects.toBeInstanceOf(InterruptedError);
      fleet.setFaults({ latencyMs: 0 });

      expect(await sync(config, 'shop-2', { pools })).toMatchObject({ status: 'complete', items: 60 });
      expect(await sync(config, 'shop-1', { pools })).toMatchObject({ status: 'complete', items: 60 });
      expect(fleet.stats().openConnections).toBeGreaterThan(0);
    } finally {
      await pools.close();
    }
    // The server sees the connections close once the pools have closed them.
    while (fleet.stats().openConnections > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(fleet.stats().openConnections).toBe(0);
  });
});
