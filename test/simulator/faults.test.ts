import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { clientFields, getPath, type Json, listAll, listPage, postToken, sellToken } from './client.js';

let sim: Simulator;
let token: string;
beforeAll(async () => {
  sim = await startSimulator({ items: 120 });
  token = (await sellToken(sim)).access;
});
afterAll(() => sim.close());
afterEach(() =>
  sim.setFaults({
    rate429: 0,
    retryAfter: 0,
    rate5xx: 0,
    dropRate: 0,
    malformedRate: 0,
    shortPageRate: 0,
    refreshDeadEnd: false,
    ignorePage: false,
    latencyMs: 0,
  }),
);

const PAGE = '/v1/sell/shop/items?per_page=10';
const ids = (items: readonly Json[]) => items.map((item) => String(item.id));

describe('rate limiting', () => {
  it('answers 429 with Retry-After in seconds, and serves again once switched off', async () => {
    sim.setFaults({ rate429: 1, retryAfter: 3 });
    const limited = await getPath(sim, PAGE, token);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(await limited.json()).toMatchObject({ error: 'rate_limited' });
    sim.setFaults({ rate429: 0 });
    expect((await getPath(sim, PAGE, token)).status).toBe(200);
  });

  it('can give Retry-After as an HTTP date a second ahead', async () => {
    sim.setFaults({ rate429: 1, retryAfter: 'date' });
    const before = Date.now();
    const limited = await getPath(sim, PAGE, token);
    const date = Date.parse(String(limited.headers.get('retry-after')));
    expect(date).toBeGreaterThan(before - 1000);
    expect(date).toBeLessThanOrEqual(Date.now() + 1000);
  });
});

describe('server errors', () => {
  it('rotates 500, 502 and 503, with JSON or HTML bodies', async () => {
    sim.setFaults({ rate5xx: 1 });
    const responses = await Promise.all([1, 2, 3].map(() => getPath(sim, PAGE, token)));
    expect(responses.map((r) => r.status).sort()).toEqual([500, 502, 503]);
    const gateway = responses.find((r) => r.status === 502);
    expect(gateway?.headers.get('content-type')).toBe('text/html');
    expect(await gateway?.text()).toContain('502 Bad Gateway');
  });
});

describe('broken bodies', () => {
  it('drops the connection in the middle of the body', async () => {
    sim.setFaults({ dropRate: 1 });
    const response = await getPath(sim, PAGE, token);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
  });

  it('sends a truncated JSON array that does not parse', async () => {
    const whole = await (await getPath(sim, PAGE, token)).text();
    sim.setFaults({ malformedRate: 1 });
    const text = await (await getPath(sim, PAGE, token)).text();
    expect(whole.startsWith(text)).toBe(true);
    expect(text.length).toBeLessThan(whole.length);
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
  });
});

describe('short pages', () => {
  it('serves short pages mid-listing yet loses nothing for a client that reads to the empty page', async () => {
    sim.setFaults({ shortPageRate: 0.5 });
    const pages: number[] = [];
    for (let page = 1; ; page += 1) {
      const items = await listPage(sim, token, `per_page=10&page=${page}`);
      if (items.length === 0) break;
      pages.push(items.length);
    }
    const total = pages.reduce((a, b) => a + b, 0);
    expect(total).toBe(120);
    const firstShort = pages.findIndex((size) => size < 10);
    expect(firstShort).toBeGreaterThanOrEqual(0);
    expect(firstShort).toBeLessThan(pages.length - 1);
    expect(ids(await listAll(sim, token, 'per_page=10'))).toEqual(sim.truth().map((item) => item.id));
    expect(sim.stats().faultsInjected.shortPage).toBeGreaterThan(0);
  });

  it('shortens the same pages every time for the same seed and page size', async () => {
    sim.setFaults({ shortPageRate: 0.5 });
    const sizes = async () =>
      Promise.all(
        [1, 2, 3, 4, 5].map(async (page) => (await listPage(sim, token, `per_page=10&page=${page}`)).length),
      );
    expect(await sizes()).toEqual(await sizes());
  });
});

describe('token faults', () => {
  it('refuses tokens from the refresh grant on the listing while password tokens still work', async () => {
    sim.setFaults({ refreshDeadEnd: true });
    const { refresh } = await sellToken(sim);
    const refreshed = await postToken(sim, {
      grant_type: 'refresh_token',
      refresh_token: refresh,
      ...clientFields(sim),
    });
    expect(refreshed.status).toBe(200);
    const refused = await getPath(sim, PAGE, String(refreshed.body.access_token));
    expect(refused.status).toBe(401);
    expect((await getPath(sim, PAGE, (await sellToken(sim)).access)).status).toBe(200);
    expect(sim.stats().faultsInjected.refreshDeadEnd).toBeGreaterThan(0);
  });
});

describe('ignoring page', () => {
  it('serves page 1 whatever page is asked for', async () => {
    sim.setFaults({ ignorePage: true });
    const first = await listPage(sim, token, 'per_page=10&page=1');
    expect(ids(await listPage(sim, token, 'per_page=10&page=2'))).toEqual(ids(first));
    expect(ids(await listPage(sim, token, 'per_page=10&page=50'))).toEqual(ids(first));
  });
});

describe('latency', () => {
  it('holds every answer back by the configured latency', async () => {
    sim.setFaults({ latencyMs: 5000 });
    const late = fetch(`${sim.baseUrl}${PAGE}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(100),
    });
    await expect(late).rejects.toThrow(/aborted/i);
    sim.setFaults({ latencyMs: 0 });
    expect((await getPath(sim, PAGE, token)).status).toBe(200);
  });
});

describe('reproducibility', () => {
  it('injects the same faults for the same seed and the same requests', async () => {
    const statuses = async () => {
      const other = await startSimulator({ items: 20, seed: 7, faults: { rate429: 0.2, rate5xx: 0.2 } });
      try {
        const access = (await sellToken(other)).access;
        const seen: number[] = [];
        for (let i = 0; i < 30; i += 1) seen.push((await getPath(other, PAGE, access)).status);
        return seen;
      } finally {
        await other.close();
      }
    };
    const first = await statuses();
    expect(new Set(first).size).toBeGreaterThan(1);
    expect(await statuses()).toEqual(first);
  });

  it('refuses fault values that make no sense and keeps the current faults', async () => {
    sim.setFaults({ rate5xx: 1 });
    expect(() => sim.setFaults({ rate5xx: 0, dropRate: -0.1 })).toThrow(
      'faults.dropRate must be a probability in 0..1',
    );
    expect(() => sim.setFaults({ moving: { insertBeforeEvery: 1.5, removeBehindEvery: 0 } })).toThrow(
      'faults.moving.insertBeforeEvery must be an integer >= 0',
    );
    expect((await getPath(sim, PAGE, token)).status).toBeGreaterThanOrEqual(500);
  });
});
