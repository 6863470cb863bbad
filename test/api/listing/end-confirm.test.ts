import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../../src/simulator/index.js';
import { clientFor, readAll } from '../helpers.js';

/**
 * A listing that ends within its first page is believed once another window ends at the same item, one
 * asking no more than the server ever served, and the window just after it holds nothing. The tight
 * window is such another window: asking page 1 again as the second shape was a request for nothing.
 */
describe('the end of a short listing', () => {
  // The simulator serves page 0 as page 1: the check that page 1 starts the listing (`ListingStart`) is
  // the second arrival at page 1, after the reading's own.
  it.each([20, 99])('of %i items is confirmed without asking page 1 twice', async (items) => {
    const sim = await startSimulator({ items, seed: 3 });
    const client = clientFor(sim, { maxInFlight: 2 });
    try {
      const reading = await readAll(client, { perPage: 100 });
      expect(reading.items.map((item) => item.id).sort()).toEqual([...sim.listedIds()].sort());
      const pages = sim.listingArrivals().map((arrival) => arrival.page);
      expect(pages.filter((page) => page === 1)).toEqual([1, 1]);
    } finally {
      await client.close();
      await sim.close();
    }
  });
});
