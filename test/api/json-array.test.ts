import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arrayElementTexts } from '../../src/api/json-array.js';

describe('arrayElementTexts', () => {
  it('gives each element its own source text, compact or pretty-printed', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), fc.boolean(), (array, pretty) => {
        const text = pretty ? JSON.stringify(array, null, 2) : JSON.stringify(array);
        const texts = arrayElementTexts(text);
        expect(texts.map((t) => JSON.parse(t))).toEqual(JSON.parse(text));
      }),
    );
  });

  it('keeps number literals as written', () => {
    expect(arrayElementTexts('[ {"price": 12.50, "t": "a,\\"]}"} ,{"price":"0.10"} ]')).toEqual([
      '{"price": 12.50, "t": "a,\\"]}"}',
      '{"price":"0.10"}',
    ]);
  });

  it('finds no element in an empty array', () => {
    expect(arrayElementTexts('[ ]')).toEqual([]);
  });
});
