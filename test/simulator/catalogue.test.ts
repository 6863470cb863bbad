import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDecimal } from '../../src/domain/decimal.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { getPath, type Json, listAll, listPage, sellToken } from './client.js';

let sim: Simulator;
let raw: string;
let items: Json[];
beforeAll(async () => {
  sim = await startSimulator({ items: 50 });
  const { access } = await sellToken(sim);
  raw = await (await getPath(sim, '/v1/sell/shop/items?per_page=50', access)).text();
  items = JSON.parse(raw) as Json[];
});
afterAll(() => sim.close());

describe('a 50-item catalogue already has every quirk of the spec', () => {
  it('writes prices as JSON numbers and as strings, with and without trailing zeros', () => {
    expect(raw).toMatch(/"price":\d+(\.\d+)?,/);
    expect(raw).toMatch(/"price":"\d+(\.\d+)?"/);
    expect(raw).toMatch(/"price":"?\d+\.\d*0"?[,}]/);
    expect(items.some((item) => item.original_price === null)).toBe(true);
    expect(items.some((item) => typeof item.original_price === 'string')).toBe(true);
    expect(items.some((item) => typeof item.original_price === 'number')).toBe(true);
  });

  it('includes prices that binary floats get wrong', () => {
    const prices = sim.truth().map((item) => item.price);
    expect(prices.filter((price) => ['0.1', '0.2', '0.3'].includes(price)).length).toBeGreaterThan(0);
  });

  it('sends published:false only on hidden items and never published:true', () => {
    expect(items.some((item) => item.published === false)).toBe(true);
    expect(items.some((item) => !('published' in item))).toBe(true);
    expect(raw).not.toContain('"published":true');
  });

  it('sends shop.image as an empty object and keeps unknown fields', () => {
    for (const item of items) {
      expect((item.shop as Json).image).toEqual({});
      expect(item).toHaveProperty('category_ids');
      expect(item).toHaveProperty('views');
    }
  });

  it('leaves optional fields out on some items', () => {
    for (const field of ['web_url', 'fbcomments', 'description', 'photos_id', 'currency']) {
      expect(items.some((item) => !(field in item))).toBe(true);
    }
    expect(items.some((item) => (item.photos as string[]).length === 0)).toBe(true);
  });

  it.each([
    ['a comma', /,/],
    ['a double quote', /"/],
    ['a newline', /[^\r]\n/],
    ['a CRLF', /\r\n/],
    ['Cyrillic', /\p{Script=Cyrillic}/u],
    ['CJK', /\p{Script=Han}/u],
    ['Arabic', /\p{Script=Arabic}/u],
    ['an emoji', /\p{Extended_Pictographic}/u],
    ['a leading =', /^=/],
    ['a leading +', /^\+/],
    ['a leading -', /^-/],
    ['a leading @', /^@/],
    ['a leading tab', /^\t/],
  ])('has titles with %s', (_kind, pattern) => {
    expect(items.some((item) => pattern.test(String(item.title)))).toBe(true);
  });

  it('gives truth values in canonical form', () => {
    for (const item of sim.truth()) {
      expect(parseDecimal(item.price)).toBe(item.price);
      expect(item.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(item.url).toBe(`${sim.baseUrl}/v1/items/${item.id}`);
    }
  });
});

describe('determinism', () => {
  it('builds the same catalogue and makes the same mutations from the same seed', async () => {
    const [again, other] = await Promise.all([
      startSimulator({ items: 50 }),
      startSimulator({ items: 50, seed: 2 }),
    ]);
    try {
      const strip = (s: Simulator) => s.truth().map(({ url, shop_url, shop_items_url, ...rest }) => rest);
      expect(strip(again)).toEqual(strip(sim));
      expect(strip(other).map((item) => item.id)).not.toEqual(strip(sim).map((item) => item.id));
      const mutation = { prices: 3, titles: 2, add: 2, remove: 1 };
      expect(again.mutate(mutation)).toEqual(sim.mutate(mutation));
      expect(strip(again)).toEqual(strip(sim));
    } finally {
      await Promise.all([again.close(), other.close()]);
    }
  });

  it('refuses options it cannot honour', async () => {
    await expect(startSimulator({ items: -1 })).rejects.toThrow('items must be an integer >= 0, got -1');
    await expect(startSimulator({ faults: { rate429: 2 } })).rejects.toThrow(
      'faults.rate429 must be a probability',
    );
  });

  it('serves an empty shop as an empty first page', async () => {
    const empty = await startSimulator({ items: 0 });
    try {
      expect(await listAll(empty, (await sellToken(empty)).access)).toEqual([]);
    } finally {
      await empty.close();
    }
  });
});

describe('a million items', () => {
  it('builds and serves a page', { timeout: 120_000 }, async () => {
    const big = await startSimulator({ items: 1_000_000 });
    try {
      const { access } = await sellToken(big);
      const last = await listPage(big, access, 'per_page=100&page=10000');
      expect(last).toHaveLength(100);
      expect(await listPage(big, access, 'per_page=100&page=10001')).toEqual([]);
      const { added } = big.mutate({ add: 1, prices: 1 });
      const [newest] = await listPage(big, access, 'per_page=1');
      expect(newest?.id).toBe(added[0]);
    } finally {
      await big.close();
    }
  });
});
