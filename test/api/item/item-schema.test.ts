import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseItem } from '../../../src/api/item/item-schema.js';

const base = {
  id: 'it-1',
  title: 'Mug, "blue"',
  url: 'https://api.example.com/v1/items/it-1',
  created_at: '2024-05-01T10:00:00Z',
  price: 12.5,
  original_price: null,
  photos: ['https://img.example.com/1.jpg'],
  fbcomments: 'https://api.example.com/fb/it-1',
  quantity: 3,
  shop: {
    id: 'demo-shop',
    url: 'https://api.example.com/v1/shops/demo-shop',
    name: 'Demo',
    image: {},
    items_url: 'https://api.example.com/v1/shops/demo-shop/items',
  },
};

function normalise(json: unknown) {
  return normaliseItem(json, JSON.stringify(json), 4);
}

describe('normaliseItem', () => {
  it('normalises the sample item with defaults for what is absent', () => {
    const result = normalise({ ...base, views: 12 });
    expect(result).toEqual({
      ok: true,
      item: {
        id: 'it-1',
        title: 'Mug, "blue"',
        price: '12.5',
        original_price: null,
        currency: null,
        quantity: 3,
        published: true,
        created_at: '2024-05-01T10:00:00Z',
        url: base.url,
        web_url: null,
        photos: base.photos,
        photos_id: [],
        description: null,
        raw_description: null,
        fbcomments: base.fbcomments,
        shop_id: 'demo-shop',
        shop_name: 'Demo',
        shop_url: base.shop.url,
        shop_image: null,
        shop_items_url: base.shop.items_url,
        raw: '{"views":12}',
      },
    });
  });

  it('reads published:false as hidden and keeps string prices exact', () => {
    const result = normalise({ ...base, published: false, price: '0.30', original_price: '1.000' });
    expect(result.ok && result.item).toMatchObject({ published: false, price: '0.3', original_price: '1' });
  });

  it.each([[{}], [''], [null], [undefined]])('reads shop.image %j as no logo', (image) => {
    const result = normalise({ ...base, shop: { ...base.shop, image } });
    expect(result.ok && result.item.shop_image).toBeNull();
  });

  it('keeps a shop logo URL', () => {
    const result = normalise({ ...base, shop: { ...base.shop, image: 'https://img.example.com/logo.png' } });
    expect(result.ok && result.item.shop_image).toBe('https://img.example.com/logo.png');
  });

  it.each([
    [{ original_price: '' }, { original_price: null }],
    [{ original_price: '  ' }, { original_price: null }],
    [{ published: 'false' }, { published: false }],
    [{ published: 'FALSE' }, { published: false }],
    [{ published: 0 }, { published: false }],
    [{ published: '0' }, { published: false }],
    [{ published: 'true' }, { published: true }],
    [{ published: 1 }, { published: true }],
    [{ published: null }, { published: true }],
    [{ quantity: '5' }, { quantity: 5 }],
    [{ quantity: ' 7 ' }, { quantity: 7 }],
    [{ quantity: -2 }, { quantity: -2 }],
    [
      { shop: { ...base.shop, image: { url: 'https://img.example.com/x.png' } } },
      { shop_image: 'https://img.example.com/x.png' },
    ],
    [{ shop: { ...base.shop, image: { width: 10 } } }, { shop_image: null }],
    [{ shop: { ...base.shop, rating: 4.5, badges: ['x'] } }, { shop_id: 'demo-shop' }],
  ])('tolerates %j', (extra, expected) => {
    const result = normalise({ ...base, ...extra });
    expect(result.ok && result.item).toMatchObject(expected);
  });

  it('keeps only what the schema does not know in raw, exactly as sent', () => {
    const shop = JSON.stringify(base.shop).replace(/}$/, ',"rating": 4.50, "since":{"y":2019}}');
    const text = `{"id":"it-1","views": 123456789012345678901234567890,"title":"t","price":12.50,"url":"${base.url}",
      "created_at":"2024-05-01T10:00:00Z","quantity":1,"shop":${shop},"tags":[1.0,"a"],"featured":false}`;
    const result = normaliseItem(JSON.parse(text), text, 1);
    expect(result.ok && result.item.raw).toBe(
      '{"views": 123456789012345678901234567890,"shop":{"rating": 4.50,"since":{"y":2019}},"tags":[1.0,"a"],"featured":false}',
    );
  });

  it('keeps an empty object as raw for an item with nothing the schema does not know', () => {
    const result = normalise({ ...base, currency: 'EUR', published: false, photos_id: [1] });
    expect(result.ok && result.item.raw).toBe('{}');
  });

  it('still refuses a quantity that is not a whole number', () => {
    for (const quantity of [1.5, '1.5', 'five']) expect(normalise({ ...base, quantity }).ok).toBe(false);
  });

  it('reads prices and numeric ids from their literal text, not through a double', () => {
    const raw =
      '{"id": 9007199254740993, "price": 12345678901234567.89, "original_price":1E-7, "title":"t",' +
      `"url":"${base.url}","created_at":"2024-05-01T10:00:00Z","quantity":1,"shop":${JSON.stringify(base.shop)}}`;
    const result = normaliseItem(JSON.parse(raw), raw, 1);
    expect(result.ok && result.item).toMatchObject({
      id: '9007199254740993',
      price: '12345678901234567.89',
      original_price: '0.0000001',
    });
  });

  it('reports the literal id of an item it cannot read', () => {
    const raw = '{"id":9007199254740993,"title":5}';
    const result = normaliseItem(JSON.parse(raw), raw, 2);
    expect(!result.ok && result.invalid.id).toBe('9007199254740993');
  });

  it('reports an item it cannot read with its id, page and a one-line reason', () => {
    const result = normalise({ ...base, price: 'twelve', quantity: 1.5 });
    expect(result).toEqual({
      ok: false,
      invalid: {
        id: 'it-1',
        page: 4,
        reason:
          'price: not a decimal number: "twelve"; quantity: not an exact integer within ±(2^53 - 1): "1.5"',
      },
    });
  });

  it.each([
    [{ price: '-12.50' }, 'price: a price cannot be negative: -12.5'],
    [{ price: -0.01 }, 'price: a price cannot be negative: -0.01'],
    [{ original_price: '-3' }, 'original_price: a price cannot be negative: -3'],
  ])('reports a negative price as invalid: %j', (prices, reason) => {
    const result = normalise({ ...base, ...prices });
    expect(result).toEqual({ ok: false, invalid: { id: 'it-1', page: 4, reason } });
  });

  it('accepts a zero price however it is signed', () => {
    const result = normalise({ ...base, price: '-0.00', original_price: 0 });
    expect(result.ok && [result.item.price, result.item.original_price]).toEqual(['0', '0']);
  });

  it('reports an item without a readable id with a null id', () => {
    const result = normalise({ title: 'x' });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.invalid.id).toBeNull();
    expect(!result.ok && result.invalid.reason).toMatch(/^id: /);
  });

  it('gives one canonical price for every JSON spelling of the same amount of cents', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 13n }), fc.nat({ max: 3 }), (cents, extraZeros) => {
        const whole = cents / 100n;
        const fraction = (cents % 100n).toString().padStart(2, '0');
        const asString = `${whole}.${fraction}${'0'.repeat(extraZeros)}`;
        const spellings: unknown[] = [asString, ` ${asString}`, Number(asString), `${cents}e-2`];
        const prices = spellings.map((price) => {
          const result = normalise({ ...base, price });
          return result.ok ? result.item.price : result.invalid.reason;
        });
        const expected = fraction === '00' ? `${whole}` : `${whole}.${fraction.replace(/0$/, '')}`;
        expect(prices).toEqual(spellings.map(() => expected));
      }),
    );
  });
});

describe('values outside the limits', () => {
  const element = (fields: Record<string, string>) => {
    const members = Object.entries({ ...fields })
      .map(([key, literal]) => `${JSON.stringify(key)}:${literal}`)
      .join(',');
    const { price: _p, quantity: _q, ...rest } = base;
    const text = `{${JSON.stringify(rest).slice(1, -1)},${members}}`;
    return normaliseItem(JSON.parse(text), text, 1);
  };

  it.each([
    ['"1e999999999"', 'price: a decimal outside the limits, with an exponent beyond ±100: "1e999999999"'],
    ['"1e-999999999"', 'price: a decimal outside the limits, with an exponent beyond ±100: "1e-999999999"'],
    // A JSON number is read from its literal text, never through a double.
    ['1e999999999', 'price: a decimal outside the limits, with an exponent beyond ±100: "1e999999999"'],
    ['1e-400', 'price: a decimal outside the limits, with an exponent beyond ±100: "1e-400"'],
    [
      `"1${'0'.repeat(45)}"`,
      'price: a decimal outside the limits, with 46 digits before the point (at most 40)',
    ],
  ])('makes an item with price %s invalid with the reason', (price, expected) => {
    const result = element({ price, quantity: '3' });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.invalid).toMatchObject({ id: 'it-1', page: 1 });
    expect(!result.ok && result.invalid.reason).toContain(expected);
  });

  it.each([
    ['9223372036854775807'],
    ['"9223372036854775807"'],
    ['9007199254740993'],
    ['"9007199254740993"'],
    ['9007199254740992'],
    ['-9007199254740992'],
    ['1e3'],
    ['3.5'],
    ['4503599627370496.5'],
    ['"3 apples"'],
    ['true'],
  ])('makes an item with quantity %s invalid, never rounded', (quantity) => {
    const result = element({ price: '1', quantity });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.invalid.reason).toMatch(/^quantity: /);
  });

  it.each([
    ['9007199254740991', 9007199254740991],
    ['-9007199254740991', -9007199254740991],
    ['"9007199254740991"', 9007199254740991],
    ['3.0', 3],
    ['" 12 "', 12],
    ['0', 0],
  ])('keeps quantity %s exactly', (quantity, expected) => {
    const result = element({ price: '1', quantity });
    expect(result.ok && result.item.quantity).toBe(expected);
  });

  it('refuses a photo id that JSON.parse has rounded', () => {
    const result = element({ price: '1', quantity: '1', photos_id: '[1, 9007199254740993]' });
    expect(!result.ok && result.invalid.reason).toBe('photos_id.1: not an exact integer within ±(2^53 - 1)');
  });

  it('replaces lone surrogates in text with U+FFFD and refuses them in an id', () => {
    const result = element({
      price: '1',
      quantity: '1',
      title: '"mug \\ud800 blue \\udfff"',
      description: '"\\udc00x"',
      photos: '["https://img.example.com/\\ud83d.jpg"]',
    });
    expect(result.ok && [result.item.title, result.item.description, result.item.photos[0]]).toEqual([
      'mug \ufffd blue \ufffd',
      '\ufffdx',
      'https://img.example.com/\ufffd.jpg',
    ]);
    const paired = element({ price: '1', quantity: '1', title: '"\\ud83d\\ude00"' });
    expect(paired.ok && paired.item.title).toBe('😀');
    const badId = element({ price: '1', quantity: '1', id: '"it-\\ud800"' });
    expect(badId.ok).toBe(false);
    expect(!badId.ok && badId.invalid).toMatchObject({ id: 'it-\ufffd' });
    expect(!badId.ok && badId.invalid.reason).toContain('lone surrogate');
  });
});
