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

/**
 * Found by test/properties/listing.test.ts: eight items at pages of four, through short pages that lose
 * nothing and false ends. Every window over item 6 is cut short there (pages of four hold 4-6, of three
 * 6 alone), so two shapes end at item 6 and the window just after it, holding item 7 alone, cannot prove
 * it. The end was believed on that window's next answer, a false end: item 7 was lost.
 */
describe('an end that items were seen after', () => {
  it('is not believed on one empty answer of the window that showed them', async () => {
    const sim = await startSimulator({
      items: 8,
      seed: 598622940,
      faults: { shortPageRate: 0.2, falseEndRate: 0.1 },
    });
    const client = clientFor(sim);
    try {
      const reading = await readAll(client, { perPage: 4, maxInFlight: 1 });
      expect(reading.items.map((item) => item.id).sort()).toEqual([...sim.listedIds()].sort());
    } finally {
      await client.close();
      await sim.close();
    }
  });
});
