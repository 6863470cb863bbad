import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTokenStore } from '../../src/api/auth/token-store.js';
import type { MarketplaceClient } from '../../src/api/client.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { clientFor, readAll } from './helpers.js';

let sim: Simulator | undefined;
const clients: MarketplaceClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await sim?.close();
  sim = undefined;
});

describe('marketplace events', () => {
  it('report every response status and every token obtained, as the marketplace counted them', async () => {
    const s = await startSimulator({
      items: 300,
      seed: 5,
      expiresIn: 0.2,
      faults: { rate429: 0.1, retryAfter: 0, rate5xx: 0.1, dropRate: 0.05, latencyMs: 1 },
    });
    sim = s;
    const statuses = new Map<number | 'network', number>();
    const tokens = { password: 0, refresh_token: 0 };
    const client = clientFor(s, {
      events: {
        response: (status) => statuses.set(status, (statuses.get(status) ?? 0) + 1),
        token: (grant) => {
          tokens[grant] += 1;
        },
      },
    });
    clients.push(client);
    // One page at a time: a read-ahead request the reader cancels past the end is never answered to it.
    await readAll(client, { perPage: 10, maxInFlight: 1 });
    // The token is due again by the second reading, which renews it with the refresh grant.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await readAll(client, { perPage: 10, maxInFlight: 1 });
    const stats = s.stats();
    const counted = [...statuses.values()].reduce((sum, n) => sum + n, 0);
    expect(counted).toBe(stats.requests);
    expect(statuses.get(429)).toBe(stats.faultsInjected.status429);
    const serverErrors = [...statuses].filter(([status]) => typeof status === 'number' && status >= 500);
    expect(serverErrors.reduce((sum, [, n]) => sum + n, 0)).toBe(stats.faultsInjected.status5xx);
    expect(tokens).toEqual({
      password: stats.tokenRequests.password,
      refresh_token: stats.tokenRequests.refresh_token,
    });
    expect(tokens.refresh_token).toBeGreaterThan(0);
  });
});

describe('a token store shared by two clients', () => {
  it('lets the second client use the first one’s valid token without logging in', async () => {
    const s = await startSimulator({ items: 30, seed: 6, expiresIn: 3600 });
    sim = s;
    const store = new MemoryTokenStore();
    for (const _ of [1, 2]) {
      const client = clientFor(s, { tokenStore: store });
      clients.push(client);
      expect((await readAll(client, { perPage: 10 })).items).toHaveLength(30);
    }
    expect(s.stats().tokenRequests).toEqual({ client_credentials: 0, password: 1, refresh_token: 0 });
  });
});
