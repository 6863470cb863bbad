import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ITEM_LAYOUT, normaliseBySchema, normaliseElement } from '../../../src/api/item/item-schema.js';
import { wellFormedItem } from '../../../src/api/item/well-formed-item.js';

const SHOP_KEYS = [...(ITEM_LAYOUT.nested.get('shop')?.known ?? [])];
const ITEM_KEYS = [...ITEM_LAYOUT.known];

/** The values at the edges of what the schema reads (spellings it reads one way or another, near
 * misses, junk), most likely first. */
const EDGES: unknown[] = [
  ...[
    '',
    ' ',
    '0',
    '1',
    'false',
    'FALSE',
    ' false ',
    'true',
    '7',
    ' 7 ',
    '-3',
    '007',
    '1.5',
    '12.50',
    '-0.00',
  ],
  ...['-1', '1e3', '0x10', 'abc', 'https://x.test/a.png', ' https://x.test/b.png '],
  ...[
    0,
    -0,
    1,
    -2,
    1.5,
    12.5,
    2 ** 53 - 1,
    2 ** 53,
    -(2 ** 53),
    1e21,
    1e-7,
    -0.01,
    Number.NaN,
    Number.POSITIVE_INFINITY,
  ],
  ...[
    true,
    false,
    null,
    [],
    ['a'],
    [''],
    [1, 2],
    [1.5],
    ['a', 1],
    [2 ** 53],
    [null],
    {},
    { url: 'https://x.test/c.png' },
  ],
  ...[{ url: ' ' }, { url: 1 }, { width: 10 }],
  // Values at and past the limits: decimals, exact quantities, lone surrogates.
  ...['1e999999999', '1e-999999999', '1e100', '1e101', `1${'0'.repeat(40)}`, `0.${'0'.repeat(40)}1`],
  ...['9007199254740991', '9007199254740992', '9007199254740993', '9223372036854775807', '3.0', ' 7 '],
  ...[9007199254740991, 2 ** 53, -(2 ** 53)],
  ...['\ud800', 'a\udfffb', '\ud83d\ude00', ['\ud800']],
];
const edgeValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom(...EDGES), weight: 6 },
  { arbitrary: fc.string({ maxLength: 6 }), weight: 1 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.double(), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
);

/** Decimals as text, plain or not (leading and trailing zeros, signs, no digits), near the limits of 40 digits. */
const decimalText = fc
  .tuple(
    fc.constantFrom('', '', '-', '+', '0', '00'),
    fc.oneof(fc.stringMatching(/^[0-9]{0,4}$/), fc.stringMatching(/^[1-9][0-9]{38,40}$/)),
    fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{0,4}$/), fc.stringMatching(/^\.[0-9]{39,41}$/)),
  )
  .map((parts) => parts.join(''));

/** Values of the usual shape for each key (the shop's and the item's), so that most elements start valid. */
const usual: Record<string, fc.Arbitrary<unknown>> = {
  id: fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,12}$/), fc.nat()),
  title: fc.string({ maxLength: 12 }),
  url: fc.constant('https://api.example.com/v1/items/1'),
  created_at: fc.constant('2024-01-01T00:00:00Z'),
  price: fc.oneof(
    fc.constantFrom('12.50', '0', '1e3', '3.10'),
    fc.nat(),
    fc.double({ min: 0, max: 1e6 }),
    decimalText,
  ),
  original_price: fc.oneof(fc.constantFrom(null, '', '20', 20.5, undefined), decimalText),
  quantity: fc.oneof(fc.nat({ max: 100 }), fc.constantFrom('5', '-2')),
  published: fc.constantFrom(true, false, 'false', 0, undefined),
  currency: fc.constantFrom('EUR', null, undefined),
  description: fc.constantFrom('text', null, undefined),
  raw_description: fc.constantFrom('<p>text</p>', null, undefined),
  fbcomments: fc.constantFrom('https://fb.example.com/1', null, undefined),
  web_url: fc.constantFrom('https://www.example.com/1', null, undefined),
  photos: fc.constantFrom(['https://img.example.com/1.jpg'], [], null, undefined),
  photos_id: fc.constantFrom([1, 2], [], null, undefined),
  name: fc.string({ maxLength: 8 }),
  image: fc.constantFrom({}, '', null, 'https://img.example.com/logo.png', {
    url: 'https://img.example.com/l.png',
  }),
  items_url: fc.constant('https://api.example.com/v1/shops/s/items'),
};

function objectOf(keys: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(...keys.map((key) => usual[key] ?? edgeValue)).map((values) => {
    const object: Record<string, unknown> = { extra: 1 };
    keys.forEach((key, i) => {
      if (values[i] !== undefined) object[key] = values[i];
    });
    return object;
  });
}

/** A usual element with up to three of its members (the shop's among them) changed to edge values or
 * left out, or the whole element or its shop something else altogether. */
const element: fc.Arbitrary<unknown> = fc
  .record({
    item: objectOf(ITEM_KEYS),
    shop: fc.oneof({ arbitrary: objectOf(SHOP_KEYS), weight: 20 }, { arbitrary: edgeValue, weight: 1 }),
    changes: fc.array(
      fc.record({
        key: fc.constantFrom(
          ...ITEM_KEYS.filter((key) => key !== 'shop'),
          ...SHOP_KEYS.map((key) => `shop.${key}`),
        ),
        value: fc.option(edgeValue, { nil: undefined, freq: 5 }),
      }),
      { maxLength: 3 },
    ),
    whole: fc.oneof({ arbitrary: fc.constant(undefined), weight: 20 }, { arbitrary: edgeValue, weight: 1 }),
  })
  .map(({ item, shop, changes, whole }) => {
    if (whole !== undefined) return structuredClone(whole);
    // A copy: generated values are shared between runs, and the changes below must not leak into them.
    const json: Record<string, unknown> = structuredClone({ ...item, shop });
    for (const { key, value } of changes) {
      const [owner, name] = key.startsWith('shop.')
        ? [json.shop as Record<string, unknown>, key.slice(5)]
        : [json, key];
      if (typeof owner !== 'object' || owner === null || Array.isArray(owner)) continue;
      if (value === undefined) delete owner[name];
      else owner[name] = value;
    }
    return json;
  });

describe('wellFormedItem, the schema fast path', () => {
  it('gives exactly what the schema gives, for every element it takes, and leaves it every other', () => {
    let taken = 0;
    let left = 0;
    fc.assert(
      fc.property(element, (json) => {
        const fast = wellFormedItem(json, '{"x":1}');
        if (fast === undefined) left += 1;
        else taken += 1;
        const read = { json, raw: '{"x":1}' };
        expect(normaliseElement(read, 3)).toEqual(normaliseBySchema(read, 3));
      }),
      { numRuns: 10_000 },
    );
    // Both sides were exercised: the comparison is not vacuous.
    expect(taken).toBeGreaterThan(1000);
    expect(left).toBeGreaterThan(1000);
  });

  it('takes the usual element', () => {
    const json = {
      id: 'it-1',
      title: 'Mug',
      url: 'https://api.example.com/v1/items/it-1',
      created_at: '2024-05-01T10:00:00Z',
      price: '12.50',
      original_price: null,
      quantity: 3,
      shop: { id: 's', url: 'https://a.test/s', name: 'S', image: {}, items_url: 'https://a.test/s/items' },
    };
    expect(wellFormedItem(json, '{}')).toMatchObject({ id: 'it-1', price: '12.5', shop_image: null });
  });
});
