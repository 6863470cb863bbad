import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { valuesHash } from '../../src/store/values-hash.js';

/** Values as items hold them: text, numbers, booleans, null, and lists of text or numbers. */
const value = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 6 }), { maxLength: 4 }),
  fc.array(fc.integer(), { maxLength: 4 }),
);
const values = fc.array(value, { maxLength: 6 });

describe('valuesHash', () => {
  it('is a safe integer, equal for equal values and different for different ones', () => {
    fc.assert(
      fc.property(values, values, (a, b) => {
        expect(Number.isSafeInteger(valuesHash(a))).toBe(true);
        expect(valuesHash(structuredClone(a))).toBe(valuesHash(a));
        // JSON tells the values apart exactly as the hash must (no NaN or -0 among item values).
        const same = JSON.stringify(a) === JSON.stringify(b);
        expect(valuesHash(a) === valuesHash(b)).toBe(same);
      }),
    );
  });

  it('keeps values apart where their texts would run together', () => {
    expect(valuesHash(['ab', ''])).not.toBe(valuesHash(['a', 'b']));
    expect(valuesHash([['a'], 'b'])).not.toBe(valuesHash([['a', 'b']]));
    expect(valuesHash([1, '1'])).not.toBe(valuesHash(['1', 1]));
    expect(valuesHash([null])).not.toBe(valuesHash([false]));
    expect(valuesHash([])).not.toBe(valuesHash([[]]));
  });
});
