import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MarketplaceClient } from '../../src/api/client.js';
import { ConfigError, ProtocolError } from '../../src/errors.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { clientFor, readAll, withoutRaw } from './helpers.js';

describe('reading 20,000 items through every fault at once', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({
      items: 20_000,
      seed: 11,
      perPageCap: 37,
      // The server expires tokens before the 1 s it announces, so that 401s, refreshes and the dead end
      // happen in every run however fast the reading is.
      expiresIn: 0.5,
      faults: {
        rate429: 0.05,
        retryAfter: 0,
        rate5xx: 0.05,
        dropRate: 0.03,
        malformedRate: 0.03,
        shortPageRate: 0.1,
        refreshDeadEnd: true,
        latencyMs: 2,
      },
    });
  });
  afterAll(() => sim.close());

  it('yields exactly the catalogue: every id once, every value equal', async () => {
    const client = clientFor(sim);
    try {
      const reading = await readAll(client, { perPage: 100 });
      expect(reading.invalid).toEqual([]);
      expect(reading.items.map(withoutRaw)).toEqual(sim.truth());
      const injected = sim.stats().faultsInjected;
      for (const kind of [
        'status429',
        'status5xx',
        'drop',
        'malformed',
        'shortPage',
        'refreshDeadEnd',
      ] as const) {
        expect(injected[kind], kind).toBeGreaterThan(0);
      }
    } finally {
      await client.close();
    }
  });
});

describe('fetching one item', () => {
  let sim: Simulator;
  let client: MarketplaceClient;
  beforeAll(async () => {
    sim = await startSimulator({ items: 30, seed: 5 });
    client = clientFor(sim);
  });
  afterAll(async () => {
    await client.close();
    await sim.close();
  });

  it('returns the item at its url', async () => {
    const [first] = sim.truth();
    const item = await client.fetchItem(first?.url ?? '');
    expect(item && withoutRaw(item)).toEqual(first);
  });

  it('returns null for an item the marketplace no longer has', async () => {
    const { removed } = sim.mutate({ remove: 1 });
    const url = `${sim.baseUrl}/v1/items/${encodeURIComponent(removed[0] ?? '')}`;
    expect(await client.fetchItem(url)).toBeNull();
  });

  it('refuses to send the token to another origin', async () => {
    const failure = client.fetchItem('https://elsewhere.example.com/v1/items/1?access_token=leak-me');
    await expect(failure).rejects.toThrow(ProtocolError);
    await expect(failure).rejects.toThrow(
      'Refusing to fetch https://elsewhere.example.com/v1/items/1?access_token=[redacted]: it is not below MARKETPLACE_BASE_URL, and the token must not be sent elsewhere.',
    );
    expect(sim.stats().itemRequests).toBeLessThan(3);
  });
});

describe('configuration', () => {
  it('refuses a clear-text base URL that is not loopback', () => {
    const create = () =>
      new MarketplaceClient({
        baseUrl: 'http://shop.example.com',
        clientId: 'c',
        clientSecret: 's',
        username: 'u',
        password: 'p',
      });
    expect(create).toThrow(ConfigError);
    expect(create).toThrow(
      'MARKETPLACE_BASE_URL must use https: (got http://shop.example.com); set MARKETPLACE_ALLOW_INSECURE=1 to allow clear text',
    );
  });
});
