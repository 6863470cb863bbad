import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MarketplaceClient } from '../../src/api/client.js';
import { startSimulator } from '../../src/simulator/index.js';

/** A listing and the faults it is served through, as fast-check draws them. */
const listing = fc.record({
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
const moving = fc.record({
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

type Listing = typeof listing | typeof moving extends fc.Arbitrary<infer T> ? T : never;

async function readThrough(
  drawn: Listing,
): Promise<{ read: Set<string>; truth: string[]; inserted: Set<string> }> {
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
    for await (const page of client.readItems({ perPage, maxInFlight }))
      for (const item of page.items) read.add(item.id);
    const inserted = new Set(sim.moves().map((move) => move.id));
    return { read, truth: sim.truth().map((item) => item.id), inserted };
  } finally {
    await client.close();
    await sim.close();
  }
}

describe('reading a listing (property)', () => {
  // Seeds 33 and 44 draw, within 150 runs, listings that the reader of 2026-11-28 (725b8cf) read without
  // their last items, the run complete (an end believed on one empty answer from just after it; see
  // `EndVotes`). Other seeds still find about one such listing in 500 (9 of 4,800): false ends and lossy
  // answers that back a wrong end at two windows; none now to pages cut short one after another, taken
  // for a listing growing at its end (test/api/listing/end-confirm.test.ts).
  it.each([
    [20261122, 30],
    [33, 150],
    [44, 150],
  ])(
    "yields exactly the server's ids through short and lossy pages and false ends (seed %i, %i runs)",
    async (seed, numRuns) => {
      await fc.assert(
        fc.asyncProperty(listing, async (drawn) => {
          const { read, truth } = await readThrough(drawn);
          expect([...read].sort()).toEqual([...truth].sort());
        }),
        { numRuns, seed },
      );
    },
  );

  it('reads every id listed throughout the read of a listing that grows meanwhile', async () => {
    await fc.assert(
      fc.asyncProperty(moving, async (drawn) => {
        const { read, truth, inserted } = await readThrough(drawn);
        // An id inserted meanwhile may or may not be read; every other one must be.
        expect(truth.filter((id) => !inserted.has(id) && !read.has(id))).toEqual([]);
        expect([...read].filter((id) => !truth.includes(id))).toEqual([]);
      }),
      { numRuns: 20, seed: 20261122 },
    );
  });
});
