import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MarketplaceClient } from '../../../src/api/client.js';
import { parseCheckpoint } from '../../../src/api/listing/checkpoint.js';
import { ApiError, ProtocolError } from '../../../src/errors.js';
import { NO_FAULTS, type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { byId, clientFor, readAll, withoutRaw } from '../helpers.js';

let sim: Simulator;
let client: MarketplaceClient;

beforeAll(async () => {
  sim = await startSimulator({ items: 1_500, seed: 7, perPageCap: 37 });
});

afterEach(async () => {
  sim.setFaults(NO_FAULTS);
  await client?.close();
});

afterAll(async () => {
  await sim.close();
});

async function expectTruth(query: Parameters<MarketplaceClient['readItems']>[0] = { perPage: 100 }) {
  client = clientFor(sim);
  const reading = await readAll(client, query);
  expect(reading.invalid).toEqual([]);
  expect(reading.items.map(withoutRaw)).toEqual(sim.truth());
  return reading;
}

describe('reading the listing', () => {
  it('reads every item once, in order, with exact values, through the server cap of 37 per page', async () => {
    const reading = await expectTruth({ perPage: 100 });
    // Asked for 100, served 37: the reader learns the server's own page size and reads on with it.
    expect(reading.pages.map((p) => p.received)[0]).toBe(37);
    expect(reading.pages.map((p) => p.page)).toEqual(reading.pages.map((_, i) => i + 1));
  });

  it('keeps in raw the fields the schema does not read, and only those', async () => {
    const reading = await expectTruth({ perPage: 30, maxInFlight: 1 });
    const unread = ['category_ids', 'featured', 'promotable', 'shipping_to', 'views'];
    for (const item of reading.items.slice(0, 50)) expect(Object.keys(JSON.parse(item.raw))).toEqual(unread);
  });

  it('reads past short pages to the first empty page', async () => {
    sim.setFaults({ shortPageRate: 0.4 });
    const reading = await expectTruth({ perPage: 30 });
    expect(reading.pages.some((p) => p.received < 30)).toBe(true);
    expect(sim.stats().faultsInjected.shortPage).toBeGreaterThan(0);
  });

  it('retries 429 answers with a Retry-After in seconds', async () => {
    sim.setFaults({ rate429: 0.3, retryAfter: 0 });
    await expectTruth();
    expect(sim.stats().faultsInjected.status429).toBeGreaterThan(0);
  });

  it('honours a Retry-After given as an HTTP date', async () => {
    sim.setFaults({ rate429: 0.05, retryAfter: 'date' });
    await expectTruth({ perPage: 100, maxInFlight: 8 });
    expect(sim.stats().faultsInjected.status429).toBeGreaterThan(0);
  });

  it('retries server errors', async () => {
    sim.setFaults({ rate5xx: 0.3 });
    await expectTruth();
  });

  it('retries dropped connections', async () => {
    sim.setFaults({ dropRate: 0.3 });
    await expectTruth();
  });

  it('retries truncated bodies', async () => {
    sim.setFaults({ malformedRate: 0.3 });
    await expectTruth();
  });

  it('resumes a reading from its checkpoint, reading on after the items it had proved', async () => {
    client = clientFor(sim);
    const first = client.readItems({ perPage: 20 });
    const pages = [];
    for await (const page of first) {
      pages.push(page);
      if (pages.length === 3) break;
    }
    const checkpoint = pages.at(-1)?.checkpoint;
    expect(parseCheckpoint(checkpoint)?.tail.length).toBeGreaterThan(0);
    const whole = sim.stats().listingRequests;
    await readAll(client, { perPage: 20 });
    const before = sim.stats().listingRequests;
    const wholeRequests = before - whole;
    const resumed = await readAll(client, { perPage: 20, resume: checkpoint });
    const read = new Set([...pages.flatMap((p) => p.items), ...resumed.items].map((item) => item.id));
    expect([...read].sort()).toEqual(
      sim
        .truth()
        .map((item) => item.id)
        .sort(),
    );
    // It did not read the listing again from the start.
    expect(sim.stats().listingRequests - before).toBeLessThan(wholeRequests);
    expect(resumed.items[0]?.id).not.toBe(sim.truth()[0]?.id);
  });

  it('reads the same with or without read-ahead', async () => {
    for (const maxInFlight of [1, 3, 16]) await expectTruth({ perPage: 50, maxInFlight });
  });

  it('confirms the end with two more requests over the last item and one after it', async () => {
    client = clientFor(sim);
    const before = sim.stats().listingRequests;
    const reading = await readAll(client, { perPage: 37, maxInFlight: 1 });
    expect(reading.items.length).toBe(1_500);
    const requests = sim.stats().listingRequests - before;
    // Overlapping windows cost a few percent on a still listing; the end costs two requests.
    expect(requests).toBeGreaterThanOrEqual(Math.ceil(1_500 / 37) + 2);
    expect(requests).toBeLessThanOrEqual(Math.ceil((1_500 / 37) * 1.35) + 3);
  });

  it('sends filters in either encoding', async () => {
    const inRange = sim.truth().filter((item) => Number(item.price) >= 10 && Number(item.price) <= 40);
    expect(inRange.length).toBeGreaterThan(0);
    for (const filterEncoding of ['brackets', 'dots'] as const) {
      client = clientFor(sim);
      const reading = await readAll(client, { perPage: 100, filters: { price: '10..40' }, filterEncoding });
      expect(reading.items.map(withoutRaw)).toEqual(inRange);
      await client.close();
    }
  });
});

describe('a listing that moves while it is read', () => {
  it('yields every id at most once and misses only items the moves skipped or inserted behind the reader', async () => {
    sim.setFaults({ moving: { insertBeforeEvery: 3, removeBehindEvery: 5 } });
    client = clientFor(sim);
    const reading = await readAll(client, { perPage: 25, maxInFlight: 1 });
    sim.setFaults({ moving: null });
    const ids = reading.items.map((item) => item.id);
    expect(new Set(ids).size).toBe(ids.length);
    const moves = sim.moves();
    const read = new Set(ids);
    const excused = new Set(moves.flatMap((m) => [m.id, m.affectedId ?? '']));
    const missed = sim.truth().filter((item) => !read.has(item.id) && !excused.has(item.id));
    expect(missed).toEqual([]);
    const truth = byId(sim.truth());
    const removed = new Set(moves.filter((m) => m.kind === 'remove').map((m) => m.id));
    for (const item of reading.items) expect(truth.has(item.id) || removed.has(item.id)).toBe(true);
  });
});

describe('failures', () => {
  it('fails with a clear ProtocolError when the server ignores page', async () => {
    sim.setFaults({ ignorePage: true });
    client = clientFor(sim);
    const failure = readAll(client, { perPage: 50 });
    await expect(failure).rejects.toThrow(ProtocolError);
    await expect(failure).rejects.toThrow(
      /^The marketplace served page \d+ with the items of page 1; it seems to ignore the page parameter, so the listing cannot be read completely\.$/,
    );
  });

  it('fails with a ProtocolError at the request cap', async () => {
    client = clientFor(sim);
    await expect(readAll(client, { perPage: 10, maxRequests: 5 })).rejects.toThrow(
      'The listing had not ended after 5 requests; stopped rather than read forever.',
    );
  });

  it('fails at once on a 4xx with the status and the server message', async () => {
    client = clientFor(sim);
    const failure = readAll(client, { order: 'cheapest' });
    await expect(failure).rejects.toThrow(
      'GET /v1/sell/shop/items?page=1&per_page=100&order=cheapest failed with HTTP 422: order must be one of title, price_desc (or absent), got "cheapest"',
    );
    await failure.catch((error: ApiError) => {
      expect(error).toBeInstanceOf(ApiError);
      expect(error.retryable).toBe(false);
      expect(error.status).toBe(422);
    });
    expect(sim.stats().listingRequests).toBeGreaterThan(0);
  });

  it('gives up on persistent server errors within the attempts', async () => {
    sim.setFaults({ rate5xx: 1 });
    client = clientFor(sim, { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2, budgetMs: 5_000 } });
    const failure = readAll(client, { perPage: 10, maxInFlight: 1 });
    await expect(failure).rejects.toThrow(
      /^GET \/v1\/sell\/shop\/items\?page=1&per_page=10 failed with HTTP 50[023] after 3 attempts in [\d.]+ s \(budget 5 s\): /,
    );
    await failure.catch((error: ApiError) => expect(error.retryable).toBe(true));
  });

  it('reports the error of a page only after yielding the pages before it', async () => {
    client = clientFor(sim, { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1_000 } });
    const pages: number[] = [];
    const reading = (async () => {
      for await (const page of client.readItems({ perPage: 10, maxInFlight: 4 })) {
        pages.push(page.page);
        if (page.page === 2) sim.setFaults({ rate5xx: 1 });
      }
    })();
    await expect(reading).rejects.toThrow(ApiError);
    expect(pages.slice(0, 2)).toEqual([1, 2]);
    expect(pages).toEqual(pages.map((_, i) => i + 1));
  });
});
