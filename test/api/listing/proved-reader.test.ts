import { afterEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { clientFor, readAll } from '../helpers.js';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('the proved reader on a still listing', () => {
  it.each([
    [250, 10, 1],
    [250, 10, 8],
    [1000, 100, 4],
    [0, 10, 2],
    [7, 10, 2],
    [100, 10, 2],
  ])(
    'reads %i items with per_page %i and read-ahead %i in few requests',
    async (items, perPage, maxInFlight) => {
      sim = await startSimulator({ items, seed: 3 });
      const before = sim.stats().listingRequests;
      const reading = await readAll(clientFor(sim), { perPage, maxInFlight });
      const ids = new Set(reading.items.map((item) => item.id));
      expect(ids.size).toBe(items);
      const requests = sim.stats().listingRequests - before;
      console.log({ items, perPage, maxInFlight, requests, base: Math.ceil(items / perPage) + 1 });
    },
  );
});

describe('the proved reader against the response cap', () => {
  it('asks for fewer items at a time when pages exceed the cap, and reads every item by windows', async () => {
    sim = await startSimulator({ items: 120, seed: 5 });
    // About 20 KB per item: pages of 40 and 20 exceed a 400 KB cap, a page of 10 does not.
    sim.mutate({
      poison: sim
        .truth()
        .map((item) => ({ id: item.id, field: 'description', json: '"0"', padZeros: 20_000 })),
    });
    const before = sim.stats().listingRequests;
    const reading = await readAll(clientFor(sim, { maxResponseBytes: 400_000 }), {
      perPage: 10,
      maxInFlight: 2,
    });
    expect(new Set(reading.items.map((item) => item.id)).size).toBe(120);
    expect(reading.invalid).toEqual([]);
    // Page-by-page passes would read the listing twice, item by item where a page is too large: 240+.
    expect(sim.stats().listingRequests - before).toBeLessThan(40);
  });

  it('reports an item alone over the cap invalid in its place, and reads every other item', async () => {
    sim = await startSimulator({ items: 50, seed: 6 });
    const big = sim.truth()[17]?.id as string;
    sim.mutate({ poison: [{ id: big, field: 'description', json: '"0"', padZeros: 500_000 }] });
    const reading = await readAll(clientFor(sim, { maxResponseBytes: 400_000 }), {
      perPage: 10,
      maxInFlight: 4,
    });
    const ids = new Set(reading.items.map((item) => item.id));
    expect(ids.size).toBe(49);
    expect(ids.has(big)).toBe(false);
    expect(reading.invalid).toEqual([
      expect.objectContaining({
        id: null,
        reason:
          'the item at position 18 of the listing alone is larger than the 400000-byte response cap, so it cannot be read',
      }),
    ]);
  });
});
