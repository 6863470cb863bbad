import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseItem } from '../../src/api/item-schema.js';
import type { Item } from '../../src/domain/item.js';

/** An amount the spec allows: whole units and up to 4 decimals, as canonical text and its digits. */
const amount = fc
  .record({ units: fc.bigInt({ min: 0n, max: 10n ** 12n }), fraction: fc.nat({ max: 9999 }) })
  .map(({ units, fraction }) => {
    const digits = String(fraction).padStart(4, '0');
    const trimmed = digits.replace(/0+$/, '');
    return { canonical: trimmed === '' ? `${units}` : `${units}.${trimmed}`, units, digits };
  });

type Amount = { canonical: string; units: bigint; digits: string };

/** The ways a server writes an amount: a JSON literal in the body's text, number or string, with any
 * number of trailing zeros. */
const spelling = (value: Amount) =>
  fc.record({ zeros: fc.nat({ max: 3 }), asString: fc.boolean(), padded: fc.boolean() }).map((how) => {
    const plain = `${value.units}.${value.digits}${'0'.repeat(how.zeros)}`;
    const text = how.padded ? plain : value.canonical;
    return how.asString ? JSON.stringify(text) : text;
  });

const item = fc.record({
  id: fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,12}$/), fc.nat().map(String)),
  title: fc.string({ maxLength: 30 }),
  price: amount,
  originalPrice: fc.option(amount, { nil: null }),
  quantity: fc.nat({ max: 1000 }),
  published: fc.boolean(),
  image: fc.option(fc.stringMatching(/^https:\/\/img\.example\.com\/[a-z0-9]{1,10}\.png$/), { nil: null }),
});

type Values = typeof item extends fc.Arbitrary<infer T> ? T : never;

/** One presentation of `values` as the JSON text of a listing element. */
function presentation(values: Values) {
  return fc
    .record({
      price: spelling(values.price),
      originalPrice: values.originalPrice
        ? spelling(values.originalPrice)
        : fc.constantFrom('null', '""', null),
      quantity: fc.constantFrom(String(values.quantity), `"${values.quantity}"`),
      published: values.published ? fc.constantFrom('true', null) : fc.constantFrom('false', '"false"', '0'),
      image: values.image
        ? fc.constantFrom(JSON.stringify(values.image), JSON.stringify({ url: values.image }))
        : fc.constantFrom('{}', '""', 'null', null),
      extra: fc.dictionary(fc.stringMatching(/^x_[a-z]{1,6}$/), fc.jsonValue({ maxDepth: 2 }), {
        maxKeys: 3,
      }),
    })
    .map((how) => {
      const shop = [
        '"id":"shop-1"',
        '"url":"https://api.example.com/v1/shops/shop-1"',
        '"name":"Shop"',
        '"items_url":"https://api.example.com/v1/shops/shop-1/items"',
        ...(how.image === null ? [] : [`"image":${how.image}`]),
      ];
      const fields = [
        `"id":${JSON.stringify(values.id)}`,
        `"title":${JSON.stringify(values.title)}`,
        '"url":"https://api.example.com/v1/items/1"',
        '"created_at":"2024-01-01T00:00:00Z"',
        `"price":${how.price}`,
        ...(how.originalPrice === null ? [] : [`"original_price":${how.originalPrice}`]),
        `"quantity":${how.quantity}`,
        ...(how.published === null ? [] : [`"published":${how.published}`]),
        `"shop":{${shop.join(',')}}`,
        ...Object.entries(how.extra).map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`),
      ];
      return `{${fields.join(',')}}`;
    });
}

function normalised(text: string): Omit<Item, 'raw'> | string {
  const result = normaliseItem(JSON.parse(text), text, 1);
  if (!result.ok) return result.invalid.reason;
  const { raw: _raw, ...values } = result.item;
  return values;
}

describe('normalisation (property)', () => {
  it('gives the same values for every presentation of the same item the spec allows', () => {
    fc.assert(
      fc.property(
        item.chain((values) => fc.tuple(fc.constant(values), presentation(values), presentation(values))),
        ([values, one, other]) => {
          const first = normalised(one);
          expect(first).toMatchObject({
            id: values.id,
            price: values.price.canonical,
            original_price: values.originalPrice?.canonical ?? null,
            quantity: values.quantity,
            published: values.published,
            shop_image: values.image,
          });
          expect(normalised(other)).toEqual(first);
        },
      ),
      { numRuns: 40, seed: 20261122 },
    );
  });
});
