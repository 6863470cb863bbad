import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { YieldedIds } from '../../../src/api/listing/yielded-ids.js';

/** Ids as listings send them: short, alike, numbered, and any text at all. */
const anyId = fc.oneof(
  fc.integer({ min: 0, max: 3000 }).map((n) => `itm_${n}`),
  fc.integer({ min: 0, max: 3000 }).map(String),
  fc.string({ minLength: 1, maxLength: 12, unit: 'binary' }),
);

describe('YieldedIds', () => {
  it('answers as a set of the ids does, through the table growing many times over', () => {
    fc.assert(
      fc.property(fc.array(anyId, { maxLength: 6000 }), (ids) => {
        const hashes = new YieldedIds();
        const reference = new Set<string>();
        for (const id of ids) {
          expect(hashes.has(id)).toBe(reference.has(id));
          expect(hashes.add(id)).toBe(!reference.has(id));
          reference.add(id);
          expect(hashes.has(id)).toBe(true);
        }
        expect(hashes.size).toBe(reference.size);
      }),
      { numRuns: 60, seed: 20261128 },
    );
  });

  it('tells apart 200,000 ids of one listing, as a first sync of that many items meets them', () => {
    const hashes = new YieldedIds();
    for (let n = 0; n < 200_000; n += 1) expect(hashes.add(`itm_${n}`)).toBe(true);
    for (let n = 0; n < 200_000; n += 7) expect(hashes.add(`itm_${n}`)).toBe(false);
    expect(hashes.has('itm_200000')).toBe(false);
    expect(hashes.size).toBe(200_000);
  });
});
