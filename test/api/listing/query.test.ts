import { describe, expect, it } from 'vitest';
import { listingPath, validateListingQuery } from '../../../src/api/listing/query.js';
import { UsageError } from '../../../src/errors.js';

describe('listingPath', () => {
  it('encodes filters with brackets by default', () => {
    const path = listingPath(
      {
        perPage: 50,
        order: 'price_desc',
        locale: 'it',
        filters: { price: '10..50', featured: true, category_ids: [1, 2] },
      },
      3,
    );
    const query = new URLSearchParams(path.split('?')[1]);
    expect(path.startsWith('/v1/sell/shop/items?')).toBe(true);
    expect(Object.fromEntries(query)).toEqual({
      page: '3',
      per_page: '50',
      order: 'price_desc',
      locale: 'it',
      'f[price]': '10..50',
      'f[featured]': 'true',
      'f[category_ids]': '1,2',
    });
  });

  it('encodes filters with dots when asked', () => {
    const path = listingPath({ filterEncoding: 'dots', filters: { shipping_to: 'IT', on_sale: false } }, 1);
    expect(Object.fromEntries(new URLSearchParams(path.split('?')[1]))).toEqual({
      page: '1',
      'f.shipping_to': 'IT',
      'f.on_sale': 'false',
    });
  });
});

describe('validateListingQuery', () => {
  it.each([
    [{ filters: { price: '10-50' } }, "The listing query's f[price] is invalid: must look like 10..50."],
    [
      { filters: { price: '50..10' } },
      "The listing query's f[price] is invalid: must not start above its end.",
    ],
    [
      { filters: { shipping_to: 'it' } },
      "The listing query's f[shipping_to] is invalid: must be two uppercase letters such as IT.",
    ],
    [
      { filters: { category_ids: '1,,2' } },
      "The listing query's f[category_ids] is invalid: must look like 1,2,3.",
    ],
    [{ perPage: 0 }, "The listing query's perPage is invalid: Too small: expected number to be >0."],
  ])('refuses %j', (query, message) => {
    expect(() => validateListingQuery(query)).toThrow(new UsageError(message));
  });

  it('refuses unknown filters', () => {
    expect(() => validateListingQuery({ filters: { colour: 'red' } as never })).toThrow(UsageError);
  });

  it('accepts a complete valid query', () => {
    const query = {
      perPage: 100,
      order: 'title',
      locale: 'en',
      filters: { price: '0..100', promotable: true },
    };
    expect(validateListingQuery(query)).toBe(query);
  });
});
