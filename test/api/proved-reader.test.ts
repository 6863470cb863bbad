import { afterEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { clientFor, readAll } from './helpers.js';

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
