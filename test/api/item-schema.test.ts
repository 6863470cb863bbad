import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseItem } from '../../src/api/item-schema.js';

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
        reason: 'price: not a decimal number: "twelve"; quantity: Invalid input',
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
