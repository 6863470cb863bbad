import { describe, expect, it } from 'vitest';
import type { MarketplaceClient } from '../../../src/api/client.js';
import type { Simulator, SimulatorOptions } from '../../../src/simulator/index.js';
import { startSimulator } from '../../../src/simulator/index.js';
import { byId, clientFor, closedAfterEach, readAll, TEST_RETRY, withoutRaw } from '../helpers.js';

const live = closedAfterEach<Simulator>();

async function serving(options: SimulatorOptions): Promise<Simulator> {
  live.server = await startSimulator(options);
  live.client = clientFor(live.server, { retry: { ...TEST_RETRY, maxAttempts: 60 } });
  return live.server;
}

const ids = (items: readonly { id: string }[]) => items.map((item) => item.id);

describe('lossy short pages', () => {
  it('lose no item: every id of the truth is read, with the re-reads counted', async () => {
    const s = await serving({ items: 3_000, seed: 5, faults: { lossyShortPageRate: 0.05 } });
    const reading = await readAll(live.client as MarketplaceClient, { perPage: 50 });
    expect(s.stats().faultsInjected.lossyShortPage).toBeGreaterThan(0);
    // An item read again (the reading backed up) counts once: the run keys on the id.
    const read = byId(reading.items.map(withoutRaw));
    expect([...read.keys()].sort()).toEqual(ids(s.truth()).sort());
    expect([...read.values()].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [...s.truth()].sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it('re-read a short page until two readings agree, and not the full pages', async () => {
    const s = await serving({ items: 100, seed: 5, faults: { lossyShortPages: [2] } });
    const reading = await readAll(live.client as MarketplaceClient, { perPage: 20, maxInFlight: 1 });
    expect(ids(reading.items)).toEqual(ids(s.truth()));
    expect(s.stats().faultsInjected.lossyShortPage).toBe(1);
  });

  it('lose nothing on the last page before the end either', async () => {
    const s = await serving({ items: 95, seed: 5, faults: { lossyShortPages: [5] } });
    const reading = await readAll(live.client as MarketplaceClient, { perPage: 20 });
    expect(ids(reading.items)).toEqual(ids(s.truth()));
    expect(s.stats().faultsInjected.lossyShortPage).toBe(1);
  });
});

describe('a false end', () => {
  it('after page 1 does not end the reading: 120 of 120 items', async () => {
    const s = await serving({ items: 120, seed: 3, faults: { falseEndPages: [2] } });
    const reading = await readAll(live.client as MarketplaceClient, { perPage: 20 });
    expect(s.stats().faultsInjected.falseEnd).toBe(1);
    expect(reading.items).toHaveLength(120);
    expect(ids(reading.items)).toEqual(ids(s.truth()));
  });

  it('is no end as a 404, a 204 or an empty list, with or without read-ahead', async () => {
    for (const maxInFlight of [1, 8]) {
      const s = await serving({ items: 140, seed: 3, faults: { falseEndPages: [2, 4, 6] } });
      const reading = await readAll(live.client as MarketplaceClient, { perPage: 20, maxInFlight });
      expect(s.stats().faultsInjected.falseEnd).toBe(3);
      expect(ids(reading.items)).toEqual(ids(s.truth()));
      await live.client?.close();
      await s.close();
    }
  });
});

describe('adaptive read-ahead', () => {
  it('grows the window while the network is slow, never above maxInFlight, and shrinks it after 429s', async () => {
    const s = await serving({ items: 2_000, seed: 9, faults: { latencyMs: 20 } });
    const phases: number[] = [];
    for await (const page of (live.client as MarketplaceClient).readItems({ perPage: 20, maxInFlight: 6 })) {
      if (page.page === 40) {
        phases.push(s.listingArrivals().length);
        s.setFaults({ rate429: 0.7, retryAfter: 0 });
      }
      if (page.page === 80) {
        phases.push(s.listingArrivals().length);
        s.setFaults({ rate429: 0 });
      }
    }
    const concurrency = s.listingArrivals().map((arrival) => arrival.concurrency);
    const [limited = 0, recovered = 0] = phases;
    const before = Math.max(...concurrency.slice(0, limited));
    const pushedBack = concurrency.slice(limited + Math.floor((recovered - limited) / 2), recovered);
    expect(before).toBeGreaterThan(1);
    // Counted at the server among the requests it answered: one the reader aborted (read ahead past a
    // moved end) stays open there until the close of its connection is read, sometimes after the
    // reader's next request has arrived (7 of 6 in about 1 run of 10 under load), though the reader
    // never has more than 6 outstanding.
    expect(s.stats().peakAnsweredListingConcurrency).toBeLessThanOrEqual(6);
    expect(s.stats().faultsInjected.status429).toBeGreaterThan(10);
    expect(Math.max(...pushedBack)).toBeLessThan(before);
  });

  it('stays at one request at a time when maxInFlight is 1, re-reads included', async () => {
    const s = await serving({ items: 300, seed: 9, faults: { latencyMs: 5, lossyShortPageRate: 0.2 } });
    const reading = await readAll(live.client as MarketplaceClient, { perPage: 20, maxInFlight: 1 });
    expect(ids(reading.items)).toEqual(ids(s.truth()));
    expect(s.stats().peakListingConcurrency).toBe(1);
  });
});

describe('firstPage', () => {
  it('reads page 1 once, at the size the server really serves', async () => {
    const s = await serving({ items: 100, seed: 2, perPageCap: 37 });
    const page = await (live.client as MarketplaceClient).firstPage({ perPage: 100 });
    expect(page).toMatchObject({ page: 1, received: 37, duplicates: 0, rereads: 0, invalid: [] });
    expect(page.items.map(withoutRaw)).toEqual(s.truth().slice(0, 37));
    expect(s.stats().listingRequests).toBe(1);
  });
});
