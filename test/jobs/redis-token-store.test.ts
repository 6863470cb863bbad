import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedisTokenStore, TOKEN_KEY_GRACE_MS } from '../../jobs/redis-token-store.js';
import type { StoredToken } from '../../src/api/auth/token-store.js';
import { MarketplaceClient } from '../../src/api/client.js';
import { InterruptedError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { deletePrefix, monitorRedis, TEST_REDIS_URL, uniquePrefix } from './redis-fixtures.js';

let sim: Simulator;
let prefix: string;
/** Two connections stand for two worker processes: they share nothing but Redis. */
let first: Redis;
let second: Redis;

beforeAll(async () => {
  sim = await startSimulator({ items: 200, seed: 3, expiresIn: 1 });
  first = new Redis(TEST_REDIS_URL);
  second = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  await Promise.all([first?.quit(), second?.quit()]);
  await sim?.close();
});
beforeEach(() => {
  prefix = uniquePrefix('tokens');
});
afterEach(() => deletePrefix(prefix));

const clientSecret = 'the-client-secret';
const storeOn = (redis: Redis, shop = 'shop') =>
  new RedisTokenStore(redis, { prefix, shop, clientSecret, logger: silentLogger() });

const token = (overrides: Partial<StoredToken> = {}): StoredToken => ({
  accessToken: 'access-1',
  refreshToken: 'refresh-1',
  renewAt: 1_700_000_000_000,
  grant: 'password',
  ...overrides,
});

describe('RedisTokenStore', () => {
  it('gives every process the token one of them stored, a lifetime without end included', async () => {
    expect(await storeOn(second).get()).toBeUndefined();
    await storeOn(first).set(token({ renewAt: Number.POSITIVE_INFINITY, refreshToken: null }));

    expect(await storeOn(second).get()).toEqual(
      token({ renewAt: Number.POSITIVE_INFINITY, refreshToken: null }),
    );
    expect(await storeOn(second, 'other-shop').get()).toBeUndefined();
  });

  it('lets the shared token key expire a while after the token is due for renewal', async () => {
    const renewAt = Date.now() + 60_000;
    await storeOn(first).set(token({ renewAt }));

    const ttl = await first.pttl(`${prefix}:token:shop`);
    expect(ttl).toBeGreaterThan(TOKEN_KEY_GRACE_MS);
    expect(ttl).toBeLessThanOrEqual(60_000 + TOKEN_KEY_GRACE_MS);
  });

  it("stops waiting for another process's renewal with the stop's reason", async () => {
    const holder = storeOn(first).withLock(() => new Promise((resolve) => setTimeout(resolve, 300)));
    const stop = new AbortController();
    const waiting = storeOn(second).withLock(async () => 'ran', stop.signal);
    stop.abort(new InterruptedError('The worker is stopping.'));

    await expect(waiting).rejects.toThrow(InterruptedError);
    await expect(waiting).rejects.toThrow('The worker is stopping.');
    await holder;
  });

  it('treats an unreadable value as no token, so that the next request logs in again', async () => {
    await first.set(`${prefix}:token:shop`, '{"accessToken":');
    expect(await storeOn(second).get()).toBeUndefined();
  });

  it('runs one renewal at a time across processes, and frees the lock when a renewal fails', async () => {
    const held: string[] = [];
    let inside = 0;
    const renewal =
      (name: string, fail = false) =>
      async () => {
        inside += 1;
        expect(inside).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 20));
        held.push(name);
        inside -= 1;
        if (fail) throw new Error(`${name} failed`);
        return name;
      };

    const results = await Promise.allSettled([
      storeOn(first).withLock(renewal('a', true)),
      storeOn(second).withLock(renewal('b')),
      storeOn(first).withLock(renewal('c')),
    ]);

    expect(held.sort()).toEqual(['a', 'b', 'c']);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(await first.exists(`${prefix}:token-lock:shop`)).toBe(0);
  });

  it('lets two processes reading one shop log in once and never spend the same refresh token twice', async () => {
    const before = sim.stats();
    const clients = [first, second].map(
      (redis) =>
        new MarketplaceClient({
          baseUrl: sim.baseUrl,
          ...sim.credentials,
          tokenStore: storeOn(redis),
        }),
    );
    try {
      // Tokens live one second here: reading page by page, both clients renew several times.
      const readAll = async (client: MarketplaceClient) => {
        let items = 0;
        for await (const page of client.readItems({ perPage: 10 })) {
          items += page.items.length;
          await new Promise((resolve) => setTimeout(resolve, 60));
        }
        return items;
      };
      expect(await Promise.all(clients.map(readAll))).toEqual([200, 200]);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }

    const after = sim.stats();
    expect(after.tokenRequests.password - before.tokenRequests.password).toBe(1);
    expect(after.tokenRequests.refresh_token - before.tokenRequests.refresh_token).toBeGreaterThan(0);
    expect(after.tokenRefusals).toBe(before.tokenRefusals);
    // Stored sealed (see token-at-rest.test.ts), and it opens for a process with the shop's secret.
    const stored = await first.get(`${prefix}:token:shop`);
    expect(stored).toMatch(/^v1\./);
    expect((await storeOn(second).get())?.accessToken).toMatch(/\S/);
  });
});

/** The GETs of the shop's token key, and the SETs of its lock key, that Redis serves while `work` runs. */
async function tokenCommands(work: () => Promise<void>): Promise<{ reads: number; locks: number }> {
  const key = `${prefix}:token:shop`;
  const lock = `${prefix}:token-lock:shop`;
  const seen = { reads: 0, locks: 0 };
  const monitor = await monitorRedis((args) => {
    const command = args[0]?.toLowerCase();
    if (command === 'get' && args[1] === key) seen.reads += 1;
    if (command === 'set' && args[1] === lock) seen.locks += 1;
  });
  try {
    await work();
  } finally {
    await monitor.stop();
  }
  return seen;
}

async function tokenReads(work: () => Promise<void>): Promise<number> {
  return (await tokenCommands(work)).reads;
}

describe('a client and the shared token', () => {
  it('logs in once for the windows a reading starts with: one look, one lock, one more look under it', async () => {
    const fresh = await startSimulator({ items: 400, seed: 6 });
    const reader = new MarketplaceClient({
      baseUrl: fresh.baseUrl,
      ...fresh.credentials,
      tokenStore: storeOn(first),
      maxInFlight: 8,
    });
    try {
      const seen = await tokenCommands(async () => {
        let items = 0;
        for await (const page of reader.readItems({ perPage: 20 })) items += page.items.length;
        expect(items).toBe(400);
      });
      expect(seen).toEqual({ reads: 2, locks: 1 });
      expect(fresh.stats().tokenRequests.password).toBe(1);
    } finally {
      await reader.close();
      await fresh.close();
    }
  });

  it('reads the token from Redis to start and when it falls due, not before every request', async () => {
    const lasting = await startSimulator({ items: 200, seed: 4 });
    const client = () =>
      new MarketplaceClient({
        baseUrl: lasting.baseUrl,
        ...lasting.credentials,
        tokenStore: storeOn(first),
        maxInFlight: 1,
      });
    const readAll = async (reader: MarketplaceClient) => {
      const ids = new Set<string>();
      try {
        for await (const page of reader.readItems({ perPage: 10 }))
          for (const item of page.items) ids.add(item.id);
      } finally {
        await reader.close();
      }
      return ids.size;
    };
    try {
      // One look before logging in, one more under the renewal lock; the token lasts the whole read.
      expect(await tokenReads(async () => expect(await readAll(client())).toBe(200))).toBe(2);
      const requests = lasting.stats().listingRequests;
      expect(requests).toBeGreaterThanOrEqual(20);
      // Another process finds the token stored: one look, however many requests it sends.
      expect(await tokenReads(async () => expect(await readAll(client())).toBe(200))).toBe(1);
      expect(lasting.stats().listingRequests - requests).toBeGreaterThanOrEqual(20);
      expect(lasting.stats().tokenRequests.password).toBe(1);
    } finally {
      await lasting.close();
    }
  });
});
