import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { growingListing, hostileListing, missedIds, readThrough } from '../../bench/faults/listing-draws.js';

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
        fc.asyncProperty(hostileListing, async (drawn) => {
          const { read, truth } = await readThrough(drawn);
          expect([...read].sort()).toEqual([...truth].sort());
        }),
        { numRuns, seed },
      );
    },
  );

  it('reads every id listed throughout the read of a listing that grows meanwhile', async () => {
    await fc.assert(
      fc.asyncProperty(growingListing, async (drawn) => {
        const reading = await readThrough(drawn);
        // An id inserted meanwhile may or may not be read; every other one must be.
        expect(missedIds(reading)).toEqual([]);
        expect([...reading.read].filter((id) => !reading.truth.includes(id))).toEqual([]);
      }),
      { numRuns: 20, seed: 20261122 },
    );
  });
});
