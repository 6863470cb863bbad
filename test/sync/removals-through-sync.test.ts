import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_IN_FLIGHT } from '../../src/api/listing/page-by-page.js';
import { type AppConfig, findShop, loadConfig } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { diffRuns } from '../../src/store/diff-runs.js';
import { openStore } from '../../src/store/open.js';
import { shopPaths } from '../../src/store/paths.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { runSync } from '../../src/sync/index.js';
import { simEnv, tempDir } from '../store/fixtures.js';

const FOREIGN = 'https://items.elsewhere.test/v1/items/';

/**
 * A marketplace whose items' `url`s point at another host, as a real one may (a CDN, a public site):
 * the simulator behind a proxy that rewrites them. shop-sync must not send its token there.
 */
function foreignUrlProxy(sim: Simulator): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const upstream = await fetch(`${sim.baseUrl}${req.url}`, {
        method: req.method,
        headers: Object.fromEntries(
          ['authorization', 'content-type'].flatMap((h) =>
            req.headers[h] ? [[h, String(req.headers[h])]] : [],
          ),
        ),
        body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
      });
      const body = (await upstream.text()).replaceAll(`${sim.baseUrl}/v1/items/`, FOREIGN);
      res.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'text/plain',
      });
      res.end(body);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let sim: Simulator;
let proxy: Server;
let temp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  sim = await startSimulator({ items: 200, seed: 21 });
  proxy = await foreignUrlProxy(sim);
});
afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve));
  await sim.close();
});
beforeEach(() => {
  temp = tempDir('shop-sync-removals-');
  sim.setFaults({ moving: null });
});
afterEach(() => temp.cleanup());

function configFor(baseUrl: string, extra: Record<string, string> = {}): AppConfig {
  return loadConfig({
    ...simEnv(sim, temp.dir),
    MARKETPLACE_BASE_URL: baseUrl,
    SYNC_PER_PAGE: '20',
    ...extra,
  });
}

function removedIds(config: AppConfig, from: number, to: number): string[] {
  const store = openStore(shopPaths(config.dataDir, 'shop').store);
  try {
    return [...diffRuns(store, from, to)].filter((c) => c.change === 'removed').map((c) => c.id);
  } finally {
    store.close();
  }
}

function snapshotIds(config: AppConfig, run: number): Set<string> {
  const store = openStore(shopPaths(config.dataDir, 'shop').store);
  try {
    return new Set([...snapshotItems(store, run)].map((item) => item.id));
  } finally {
    store.close();
  }
}

describe('confirming removals', () => {
  it('confirms removals by a second look at the listing when item URLs point at another host', async () => {
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const config = configFor(proxyUrl);
    const sync = () => runSync(findShop(config, 'shop'), { config, log: silentLogger() });
    await sync();
    const truth = sim.mutate({ remove: 3 });
    const items = sim.stats().itemRequests;
    const listings = sim.stats().listingRequests;

    const second = await sync();

    expect(second.removed).toBe(3);
    expect(removedIds(config, 1, 2)).toEqual([...truth.removed].sort());
    expect(sim.stats().itemRequests).toBe(items);
    expect(sim.stats().listingRequests - listings).toBeGreaterThanOrEqual(2 * second.pages);
  });

  it('reports no phantom removal through a moving listing when item URLs cannot tell', async () => {
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const config = configFor(proxyUrl);
    const sync = () => runSync(findShop(config, 'shop'), { config, log: silentLogger() });
    await sync();
    const movesBefore = sim.moves().length;
    sim.setFaults({ moving: { insertBeforeEvery: 4, removeBehindEvery: 3 } });
    await sync();
    sim.setFaults({ moving: null });

    const moves = sim.moves().slice(movesBefore);
    const skipped = moves
      .filter((m) => m.kind === 'remove' && m.affectedId !== null)
      .map((m) => m.affectedId);
    expect(skipped.length).toBeGreaterThan(0);
    const snapshot = snapshotIds(config, 2);
    for (const id of skipped) expect(snapshot.has(id as string)).toBe(true);
    // An item removed behind one request may not have been read yet: the server may answer a window
    // read ahead before the one that holds it. Such an item really went during the run (the contract
    // lets this run or the next report it); a phantom is an item reported removed that is still listed.
    const went = new Set(moves.filter((m) => m.kind === 'remove').map((m) => m.id));
    const listed = new Set(sim.listedIds());
    const removed = removedIds(config, 1, 2);
    expect(removed.filter((id) => listed.has(id) || !went.has(id))).toEqual([]);
  });

  it('reports no removal through a moving listing read one window at a time', async () => {
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const config = configFor(proxyUrl, { SYNC_MAX_IN_FLIGHT: '1' });
    const sync = () => runSync(findShop(config, 'shop'), { config, log: silentLogger() });
    await sync();
    sim.setFaults({ moving: { insertBeforeEvery: 4, removeBehindEvery: 3 } });
    await sync();
    sim.setFaults({ moving: null });
    // Answered in the order asked, every item removed behind a request was read before it went.
    expect(removedIds(config, 1, 2)).toEqual([]);
  });

  it('asks the listing, not the item URLs, when the shop is filtered', async () => {
    const file = `${temp.dir}/shops.yaml`;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, `shops:\n  shop:\n    filters:\n      price: "0..100000000"\n`);
    const config = configFor(sim.baseUrl, { SHOP_SYNC_CONFIG: file });
    expect(findShop(config, 'shop').filters).toEqual({ price: '0..100000000' });
    const sync = () => runSync(findShop(config, 'shop'), { config, log: silentLogger() });
    await sync();
    const truth = sim.mutate({ remove: 2 });
    const items = sim.stats().itemRequests;

    await sync();

    expect(sim.stats().itemRequests).toBe(items);
    expect(removedIds(config, 1, 2)).toEqual([...truth.removed].sort());
  });

  it('asks item by item when only a few are missing and their URLs can tell', async () => {
    const config = configFor(sim.baseUrl);
    const sync = () => runSync(findShop(config, 'shop'), { config, log: silentLogger() });
    await sync();
    const truth = sim.mutate({ remove: 2 });
    const items = sim.stats().itemRequests;
    const listings = sim.stats().listingRequests;

    const second = await sync();

    expect(sim.stats().itemRequests - items).toBe(2);
    // One read of the listing: its pages, the empty page that ends it, what read-ahead had in flight
    // beyond it, and the (up to three) requests that confirm the end.
    expect(sim.stats().listingRequests - listings).toBeLessThanOrEqual(
      second.pages + DEFAULT_MAX_IN_FLIGHT + 3,
    );
    expect(removedIds(config, 1, 2)).toEqual([...truth.removed].sort());
  });
});
