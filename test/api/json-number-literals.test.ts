import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { topLevelNumberLiterals } from '../../src/api/json-number-literals.js';

/** A JSON number literal as a server may write it: sign, leading digits, fraction, exponent. */
const numberLiteral = fc
  .tuple(
    fc.boolean(),
    fc.stringMatching(/^(0|[1-9]\d{0,24})$/),
    fc.option(fc.stringMatching(/^\d{1,20}$/), { nil: undefined }),
    fc.option(
      fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 30 })),
      {
        nil: undefined,
      },
    ),
  )
  .map(
    ([negative, whole, fraction, exponent]) =>
      `${negative ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}${exponent ? exponent.join('') : ''}`,
  );

/** Strings that look like keys and numbers, to tempt a scanner that does not track string state. */
const trickyString = fc.oneof(
  fc.string(),
  fc.constantFrom('"price":1', '{"price":2}', '\\', '\\"', 'a,"price":3,', '}', ']', ':'),
);

const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

const whitespace = fc.stringMatching(/^[ \t\n\r]{0,3}$/);

/** Values nested inside the object; their keys (`price` among them) are not the object's own. */
const nested: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberLiteral,
    trickyString.map((s) => JSON.stringify(s)),
    fc.constantFrom('true', 'false', 'null'),
    fc.array(tie('value'), { maxLength: 3 }).map((values) => `[${values.join(',')}]`),
    fc
      .array(fc.tuple(fc.constantFrom('price', 'id', 'x'), tie('value')), { maxLength: 3 })
      .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).value;

describe('topLevelNumberLiterals', () => {
  it('finds the literal of each top-level number key, and nothing nested or quoted', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.tuple(fc.oneof(fc.constantFrom('price', 'id', 'original_price'), fc.string()), fc.boolean()),
          { selector: ([key]) => key, maxLength: 6 },
        ),
        fc.array(numberLiteral, { minLength: 6, maxLength: 6 }),
        fc.array(nested, { minLength: 6, maxLength: 6 }),
        whitespace,
        (keys, numbers, others, space) => {
          const expected = new Map<string, string>();
          const members = keys.map(([key, isNumber], i) => {
            const value = isNumber ? (numbers[i] ?? '0') : (others[i] ?? 'null');
            if (NUMBER.test(value)) expected.set(key, value);
            return `${space}${JSON.stringify(key)}${space}:${space}${value}${space}`;
          });
          const text = `${space}{${members.join(',')}}${space}`;
          expect(() => JSON.parse(text)).not.toThrow();
          const found = topLevelNumberLiterals(text);
          expect(found).toEqual(expected);
        },
      ),
    );
  });

  it('keeps digits a double would lose', () => {
    const literals = topLevelNumberLiterals(
      '{"id":9007199254740993,"price":12345678901234567.89,"n":{"price":1}}',
    );
    expect(Object.fromEntries(literals)).toEqual({ id: '9007199254740993', price: '12345678901234567.89' });
  });

  it('finds nothing in what is not an object', () => {
    expect(topLevelNumberLiterals('[1,2,{"price":3}]').size).toBe(0);
    expect(topLevelNumberLiterals('"price":1').size).toBe(0);
    expect(topLevelNumberLiterals('12').size).toBe(0);
  });

  it('keeps the last of a key written twice, as JSON.parse does', () => {
    expect(topLevelNumberLiterals('{"price":1.10,"price":2.20}').get('price')).toBe('2.20');
  });
});
