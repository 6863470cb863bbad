import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NO_FAULTS, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { clientFields, getPath, type Json, listAll, listPage, postToken, sellToken } from './client.js';

let sim: Simulator;
let token: string;
beforeAll(async () => {
  sim = await startSimulator({ items: 120 });
  token = (await sellToken(sim)).access;
});
afterAll(() => sim.close());
afterEach(() => sim.setFaults(NO_FAULTS));

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

describe('lossy short pages', () => {
  it('leave out the last items of an answer, yet the next page starts after the full page', async () => {
    const full = await listPage(sim, token, 'per_page=10&page=3');
    const next = await listPage(sim, token, 'per_page=10&page=4');
    sim.setFaults({ lossyShortPageRate: 1 });
    const lossy = await listPage(sim, token, 'per_page=10&page=3');
    expect(lossy.length).toBeGreaterThanOrEqual(7);
    expect(lossy.length).toBeLessThan(10);
    expect(ids(lossy)).toEqual(ids(full).slice(0, lossy.length));
    expect(ids((await listPage(sim, token, 'per_page=10&page=4')).slice(0, 1))).toEqual(
      ids(next).slice(0, 1),
    );
    expect(sim.stats().faultsInjected.lossyShortPage).toBeGreaterThanOrEqual(2);
  });

  it('answer fully on some re-reads of the same page', async () => {
    sim.setFaults({ lossyShortPageRate: 0.5 });
    const sizes = new Set<number>();
    for (let i = 0; i < 12; i += 1) sizes.add((await listPage(sim, token, 'per_page=10&page=2')).length);
    expect(sizes.has(10)).toBe(true);
    expect([...sizes].some((size) => size < 10)).toBe(true);
  });
});

describe('false ends', () => {
  it('answer 404, 204 and an empty list in turn on the listed pages, once each, then the page', async () => {
    sim.setFaults({ falseEndPages: [2, 3, 4] });
    const answers = [];
    for (const page of [2, 3, 4, 2]) {
      const response = await getPath(sim, `/v1/sell/shop/items?per_page=10&page=${page}`, token);
      answers.push([response.status, await response.text()]);
    }
    expect(answers.slice(0, 3)).toEqual([
      [404, '{"detail":"Invalid page."}'],
      [204, ''],
      [200, '[]'],
    ]);
    expect(answers[3]?.[0]).toBe(200);
    expect(JSON.parse(String(answers[3]?.[1]))).toHaveLength(10);
    expect(sim.stats().faultsInjected.falseEnd).toBe(3);
  });

  it('never answer a false end on page 1, past the end, or twice in a row for a page', async () => {
    sim.setFaults({ falseEndRate: 1 });
    expect(await listPage(sim, token, 'per_page=10&page=1')).toHaveLength(10);
    expect(await listPage(sim, token, 'per_page=10&page=13')).toEqual([]);
    const served = [];
    for (let i = 0; i < 4; i += 1) {
      const response = await getPath(sim, '/v1/sell/shop/items?per_page=10&page=5', token);
      served.push(response.status === 200 && (await response.text()).length > 2);
    }
    expect(served).toEqual([false, true, false, true]);
  });
});

describe('a dripping body', () => {
  it('sends every listing body one byte at a time, complete in the end', async () => {
    const whole = await (await getPath(sim, '/v1/sell/shop/items?per_page=1', token)).text();
    sim.setFaults({ dripMs: 2 });
    const response = await getPath(sim, '/v1/sell/shop/items?per_page=1', token);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const chunks: number[] = [];
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      chunks.push(chunk.value.length);
    expect(chunks.reduce((a, b) => a + b, 0)).toBe(Buffer.byteLength(whole));
    // Byte by byte: a busy receiver may take two or three bytes in one read, never the body at once.
    expect(chunks.length).toBeGreaterThan(Buffer.byteLength(whole) / 4);
    expect(Math.max(...chunks)).toBeLessThanOrEqual(4);
    expect(sim.stats().faultsInjected.drip).toBe(1);
  });
});

describe('concurrency', () => {
  it('records the page, its size and how many listing requests were being answered when each arrived', async () => {
    sim.setFaults({ latencyMs: 50 });
    const before = sim.listingArrivals().length;
    await Promise.all([1, 2, 3].map((page) => listPage(sim, token, `per_page=10&page=${page}`)));
    const seen = sim.listingArrivals().slice(before);
    // The answer of an earlier test may still be closing on the server when these arrive: it counts.
    const earlier = (seen[0]?.concurrency ?? 1) - 1;
    expect(earlier).toBeLessThanOrEqual(1);
    expect(seen).toEqual([
      { page: 1, perPage: 10, concurrency: earlier + 1 },
      { page: 2, perPage: 10, concurrency: earlier + 2 },
      { page: 3, perPage: 10, concurrency: earlier + 3 },
    ]);
    expect(sim.stats().peakListingConcurrency).toBeGreaterThanOrEqual(3);
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
