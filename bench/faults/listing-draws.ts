import fc from 'fast-check';
import { MarketplaceClient } from '../../src/api/client.js';
import { startSimulator } from '../../src/simulator/index.js';

/** A listing as the arbitraries below draw it: its size, its page size, read-ahead and the faults' rates. */
export interface DrawnListing {
  readonly items: number;
  readonly seed: number;
  readonly perPage: number;
  readonly maxInFlight: number;
  readonly shortPageRate: number;
  readonly lossyShortPageRate: number;
  readonly falseEndRate: number;
  /** Requests between two insertions at the front; 0 for a listing that does not grow. */
  readonly insertBeforeEvery: number;
}

/**
 * A listing and the faults it is served through, as fast-check draws them: short pages that lose
 * nothing, short pages that leave items out, and false ends, at rates a reader must read through.
 */
export const hostileListing: fc.Arbitrary<DrawnListing> = fc.record({
  items: fc.nat({ max: 150 }),
  seed: fc.nat({ max: 2 ** 30 }),
  perPage: fc.integer({ min: 4, max: 25 }),
  maxInFlight: fc.integer({ min: 1, max: 8 }),
  shortPageRate: fc.constantFrom(0, 0.2, 0.5),
  lossyShortPageRate: fc.constantFrom(0, 0.05, 0.1),
  falseEndRate: fc.constantFrom(0, 0.1, 0.2),
  insertBeforeEvery: fc.constant(0),
});

/** A listing that grows while it is read (duplicates at page boundaries), through read-ahead. Insertions
 * are slower than the reader advances: one every few requests on one-item pages keeps the listing ahead
 * of any reader (it reads the same item again and again, as from a server ignoring `page`). */
export const growingListing: fc.Arbitrary<DrawnListing> = fc.record({
  items: fc.nat({ max: 150 }),
  seed: fc.nat({ max: 2 ** 30 }),
  // Pages of fewer than 8 items leave windows too little room to overlap (see windowAfter).
  perPage: fc.integer({ min: 8, max: 25 }),
  maxInFlight: fc.integer({ min: 1, max: 8 }),
  shortPageRate: fc.constant(0),
  lossyShortPageRate: fc.constantFrom(0, 0.05),
  falseEndRate: fc.constant(0),
  insertBeforeEvery: fc.constantFrom(6, 10),
});

/** What a reading of a drawn listing saw, beside what the server held at its end. */
export interface ListingRead {
  readonly read: Set<string>;
  readonly truth: string[];
  /** Ids the server inserted while the listing was read: they may or may not be read. */
  readonly inserted: Set<string>;
}

/** Reads a drawn listing to its end through the client, from a simulator of its own. */
export async function readThrough(drawn: DrawnListing): Promise<ListingRead> {
  const { insertBeforeEvery, items, seed, perPage, maxInFlight, ...rates } = drawn;
  const moving = insertBeforeEvery > 0 ? { insertBeforeEvery, removeBehindEvery: 0 } : null;
  const sim = await startSimulator({ items, seed, faults: { ...rates, moving } });
  const client = new MarketplaceClient({
    baseUrl: sim.baseUrl,
    ...sim.credentials,
    retry: { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 2, budgetMs: 10_000 },
  });
  try {
    const read = new Set<string>();
    for await (const page of client.readItems({ perPage, maxInFlight })) {
      for (const item of page.items) read.add(item.id);
    }
    const inserted = new Set(sim.moves().map((move) => move.id));
    return { read, truth: sim.truth().map((item) => item.id), inserted };
  } finally {
    await client.close();
    await sim.close();
  }
}

/** The ids listed throughout a reading (not inserted meanwhile) that it did not yield. */
export function missedIds({ read, truth, inserted }: ListingRead): string[] {
  return truth.filter((id) => !inserted.has(id) && !read.has(id));
}
