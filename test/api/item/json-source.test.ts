import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ObjectLayout,
  objectSource as sourceNamed,
  elementSources as sourcesNamed,
} from '../../../src/api/item/json-source.js';

/** `value` with its keys (and its nested objects') in reverse order: names that do not fit the text. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .map(([k, v]) => [k, reversed(v)])
      .reverse(),
  );
}

/** The sources of `text` as the client reads them, named by JSON.parse's keys; checked to be what the
 * text gives with names that do not fit it, or none: the names must never be trusted blindly. */
function elementSources(text: string, layout: ObjectLayout) {
  const parsed = JSON.parse(text);
  const sources = sourcesNamed(text, layout, parsed);
  expect(sourcesNamed(text, layout, [])).toEqual(sources);
  expect(sourcesNamed(text, layout, reversed(parsed) as unknown[])).toEqual(sources);
  return sources;
}

function objectSource(text: string, layout: ObjectLayout) {
  const parsed = JSON.parse(text);
  const source = sourceNamed(text, layout, parsed);
  expect(sourceNamed(text, layout, undefined)).toEqual(source);
  expect(sourceNamed(text, layout, reversed(parsed))).toEqual(source);
  return source;
}

const layout = (
  known: string[],
  exact: string[] = [],
  nested: [string, ObjectLayout][] = [],
): ObjectLayout => ({
  known: new Set(known),
  exact: new Set(exact),
  nested: new Map(nested),
});

/** Reads `a`, `b` and the object `n`, whose `x` it reads too. */
const LAYOUT = layout(['a', 'b', 'n'], ['a'], [['n', layout(['x'])]]);

/** What `unknown` must hold for `value` under LAYOUT, as JSON.parse sees it. */
function unknownOf(value: unknown, known: ObjectLayout = LAYOUT): Record<string, unknown> {
  // Entries, not assignments: a member named `__proto__` is an own member in JSON.parse's object too.
  const kept: [string, unknown][] = [];
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    const nested = known.nested.get(key);
    if (!known.known.has(key)) kept.push([key, member]);
    else if (nested && typeof member === 'object' && member !== null && !Array.isArray(member)) {
      const inner = unknownOf(member, nested);
      if (Object.keys(inner).length > 0) kept.push([key, inner]);
    }
  }
  return Object.fromEntries(kept);
}

const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Objects that use LAYOUT's keys among others, at the top and nested. */
const member = fc.oneof(fc.constantFrom('a', 'b', 'n', 'x'), fc.string({ maxLength: 4 }));
const element = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(
    member,
    fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.dictionary(member, fc.jsonValue({ maxDepth: 1 }))),
  ),
);

describe('elementSources', () => {
  it('finds every element and keeps what the layout does not read, compact or pretty-printed', () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 6 }), fc.boolean(), (array, pretty) => {
        const text = pretty ? JSON.stringify(array, null, 2) : JSON.stringify(array);
        const sources = elementSources(text, LAYOUT);
        expect(sources).toHaveLength(array.length);
        sources.forEach((source, i) => {
          const value = JSON.parse(JSON.stringify(array[i]));
          expect(JSON.parse(source.unknown)).toEqual(isObject(value) ? unknownOf(value) : {});
        });
      }),
    );
  });

  it('keeps unknown members as written, big integers and all, and known ones not at all', () => {
    const text = `[ {"a": 1.50, "views" : 123456789012345678901234567890, "n": {"x": 1, "rating": 4.50e0},
      "tags": [1.0, {"deep": 9007199254740993}], "b": "known"} , {"a":"2"}, 7, {} ]`;
    expect(elementSources(text, LAYOUT)).toEqual([
      {
        numbers: new Map([['a', '1.50']]),
        unknown:
          '{"views" : 123456789012345678901234567890,"n":{"rating": 4.50e0},"tags": [1.0, {"deep": 9007199254740993}]}',
      },
      { numbers: undefined, unknown: '{}' },
      { numbers: undefined, unknown: '{}' },
      { numbers: undefined, unknown: '{}' },
    ]);
  });

  it('finds no element in an empty array', () => {
    expect(elementSources('[ ]', LAYOUT)).toEqual([]);
  });
});

/** A JSON number literal as a server may write it: sign, leading digits, fraction, exponent. */
const numberLiteral = fc
  .tuple(
    fc.boolean(),
    fc.stringMatching(/^(0|[1-9]\d{0,24})$/),
    fc.option(fc.stringMatching(/^\d{1,20}$/), { nil: undefined }),
    fc.option(
      fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 30 })),
      { nil: undefined },
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

const EXACT = layout(['price', 'id', 'original_price'], ['price', 'id', 'original_price']);

describe('objectSource', () => {
  it('finds the literal of each exact number member, nothing nested or quoted, and keeps the rest', () => {
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
          const literals = new Map<string, string>();
          const unknown: string[] = [];
          const members = keys.map(([key, isNumber], i) => {
            const value = isNumber ? (numbers[i] ?? '0') : (others[i] ?? 'null');
            const written = `${JSON.stringify(key)}${space}:${space}${value}`;
            if (!EXACT.known.has(key)) unknown.push(written);
            else if (NUMBER.test(value)) literals.set(key, value);
            return `${space}${written}${space}`;
          });
          const text = `${space}{${members.join(',')}}${space}`;
          expect(() => JSON.parse(text)).not.toThrow();
          expect(objectSource(text, EXACT)).toEqual({
            numbers: literals.size > 0 ? literals : undefined,
            unknown: `{${unknown.join(',')}}`,
          });
        },
      ),
    );
  });

  it('keeps the last of a key written twice, as JSON.parse does', () => {
    expect(objectSource('{"price":1.10,"price":2.20,"v":1,"v":2}', EXACT)).toEqual({
      numbers: new Map([['price', '2.20']]),
      unknown: '{"v":2}',
    });
    expect(objectSource('{"price":1.10,"price":"2.20"}', EXACT).numbers?.get('price')).toBeUndefined();
    expect(objectSource('{"n":{"r":1},"n":{"x":2}}', LAYOUT).unknown).toBe('{}');
  });

  it('knows a key written with escapes', () => {
    expect(objectSource('{"pr\\u0069ce":1.10,"\\u0076":1}', EXACT)).toEqual({
      numbers: new Map([['price', '1.10']]),
      unknown: '{"\\u0076":1}',
    });
  });

  it('reads an escaped key as what it stands for, whatever name it looks like', () => {
    // Reversed, the parsed names put the six characters \u0041 where the text spells them as an escape.
    expect(objectSource('{"\\\\u0041":1,"\\u0041":2}', layout(['A']))).toEqual({
      numbers: undefined,
      unknown: '{"\\\\u0041":1}',
    });
  });

  it('finds nothing in what is not an object', () => {
    for (const text of ['[1,2,{"price":3}]', '"price"', '12', 'null'])
      expect(objectSource(text, EXACT)).toEqual({ numbers: undefined, unknown: '{}' });
  });
});
