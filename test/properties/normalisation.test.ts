import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseItem } from '../../src/api/item/item-schema.js';
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

describe('values at the limits (property)', () => {
  /** The sample element with `price` and `quantity` written as the given JSON literals. */
  const element = (price: string, quantity: string) =>
    `{"id":"it-1","title":"t","url":"https://api.example.com/v1/items/1","created_at":"2024-01-01T00:00:00Z",` +
    `"price":${price},"quantity":${quantity},"shop":{"id":"s","url":"https://api.example.com/v1/shops/s",` +
    `"name":"S","items_url":"https://api.example.com/v1/shops/s/items"}}`;
  const SAFE = 2n ** 53n - 1n;

  it('keeps a quantity exactly when it is an integer within ±(2^53 − 1), written as a number or a string, and refuses every other', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }),
          fc.bigInt({ min: -SAFE - 3n, max: -SAFE + 3n }),
          fc.bigInt({ min: SAFE - 3n, max: SAFE + 3n }),
        ),
        fc.boolean(),
        (quantity, asString) => {
          const literal = asString ? `"${quantity}"` : String(quantity);
          const result = normalised(element('"1"', literal));
          const within = quantity >= -SAFE && quantity <= SAFE;
          if (within) expect(result).toMatchObject({ quantity: Number(quantity) });
          else expect(result).toMatch(/^quantity: not an exact integer/);
        },
      ),
      { numRuns: 200, seed: 20261125 },
    );
  });

  it('keeps a price within 40 digits each side of the point and an exponent within ±100, and refuses the others with the reason', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9]{1,60}$/),
        fc.stringMatching(/^[0-9]{0,60}$/),
        fc.integer({ min: -130, max: 130 }),
        fc.boolean(),
        (whole, fraction, exponent, asString) => {
          const text = `${whole}${fraction ? `.${fraction}` : ''}e${exponent}`;
          // JSON numbers have no leading zeros: such literals travel as strings.
          const quoted = asString || /^0\d/.test(whole);
          const result = normalised(element(quoted ? `"${text}"` : text, '1'));
          // The value's digits without redundant zeros, and where its point falls.
          const digits = `${whole}${fraction}`;
          const first = digits.search(/[1-9]/);
          const point = whole.length + exponent;
          if (Math.abs(exponent) > 100) {
            expect(result).toMatch(/^price: a decimal outside the limits, with an exponent beyond ±100/);
            return;
          }
          if (first === -1) {
            expect(result).toMatchObject({ price: '0' });
            return;
          }
          const last = digits.length - 1 - digits.split('').reverse().join('').search(/[1-9]/);
          const before = Math.max(0, point - first);
          const after = Math.max(0, last + 1 - point);
          if (before > 40) expect(result).toMatch(/digits before the point \(at most 40\)/);
          else if (after > 40) expect(result).toMatch(/digits after the point \(at most 40\)/);
          else {
            const price = (result as { price: string }).price;
            // Exact: the same value as the literal, by BigInt arithmetic on both.
            const scaled = (decimal: string, scale: number) => {
              const [w, f = ''] = decimal.split('.');
              return BigInt(`${w}${f.padEnd(scale, '0')}`);
            };
            const scale = 40 + 100 + 60;
            const literalValue = BigInt(digits) * 10n ** BigInt(scale - fraction.length + exponent);
            expect(scaled(price, scale)).toBe(literalValue);
          }
        },
      ),
      { numRuns: 300, seed: 20261125 },
    );
  });
});
