import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDecimal } from '../../src/domain/decimal.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { getPath, type Json, listAll, listPage, normalise, sellToken } from './client.js';

let sim: Simulator;
let token: string;
beforeAll(async () => {
  sim = await startSimulator({ items: 250, perPageCap: 37, defaultPerPage: 20 });
  token = (await sellToken(sim)).access;
});
afterAll(() => sim.close());

const ids = (items: readonly Json[]) => items.map((item) => String(item.id));

async function unprocessable(query: string): Promise<Json> {
  const response = await getPath(sim, `/v1/sell/shop/items?${query}`, token);
  expect(response.status).toBe(422);
  return (await response.json()) as Json;
}

describe('paging', () => {
  it('serves default-size pages, newest first, and the whole catalogue exactly once', async () => {
    expect(await listPage(sim, token, '')).toHaveLength(20);
    const all = await listAll(sim, token, 'per_page=37');
    expect(ids(all)).toEqual(sim.truth().map((item) => item.id));
  });

  it('caps per_page silently at the server maximum', async () => {
    expect(await listPage(sim, token, 'per_page=100')).toHaveLength(37);
    expect(ids(await listPage(sim, token, 'per_page=100&page=2'))).toEqual(
      sim
        .truth()
        .slice(37, 74)
        .map((item) => item.id),
    );
  });

  it('answers an empty array beyond the end', async () => {
    expect(await listPage(sim, token, 'per_page=37&page=8')).toEqual([]);
    expect(await listPage(sim, token, 'page=999999999')).toEqual([]);
  });

  it.each(['page=0', 'page=abc', 'page=1.5', 'per_page=0', 'per_page=-3'])(
    'refuses %s with a message',
    async (query) => {
      const body = await unprocessable(query);
      expect(body.error).toBe('invalid_parameter');
      expect(body.message).toMatch(/^(page|per_page) must be a positive integer/);
    },
  );

  it('serves JSON the normalised truth matches field for field', async () => {
    const served = (await listAll(sim, token, 'per_page=37')).map(normalise);
    expect(served).toEqual(sim.truth());
  });
});

describe('order', () => {
  it('sorts by title in code-unit order', async () => {
    const titles = (await listAll(sim, token, 'per_page=37&order=title')).map((item) => String(item.title));
    expect(titles).toHaveLength(250);
    expect(titles).toEqual([...titles].sort());
  });

  it('sorts by price, highest first, comparing exact values', async () => {
    const prices = (await listAll(sim, token, 'per_page=37&order=price_desc')).map((item) =>
      Number(parseDecimal(item.price as string | number)),
    );
    expect(prices).toHaveLength(250);
    expect(prices).toEqual([...prices].sort((a, b) => b - a));
  });

  it('refuses an unknown order and accepts a locale', async () => {
    expect((await unprocessable('order=cheapest')).message).toContain(
      'order must be one of title, price_desc',
    );
    expect(await listPage(sim, token, 'locale=it&per_page=1')).toHaveLength(1);
    expect((await unprocessable('locale=not a locale')).message).toContain('locale');
  });
});

describe('filters', () => {
  async function filtered(query: string): Promise<Json[]> {
    return listAll(sim, token, `per_page=37&${query}`);
  }

  it('f[featured] and its dot alias f.featured select the same featured items', async () => {
    const featured = await filtered('f[featured]=true');
    expect(featured.length).toBeGreaterThan(0);
    expect(featured.every((item) => item.featured === true)).toBe(true);
    expect(ids(await filtered('f.featured=1'))).toEqual(ids(featured));
    const others = await filtered('f[featured]=0');
    expect(featured.length + others.length).toBe(250);
  });

  it('f[on_sale] selects the items with an original price', async () => {
    const onSale = await filtered('f[on_sale]=true');
    expect(onSale.length).toBeGreaterThan(0);
    expect(onSale.every((item) => item.original_price !== null)).toBe(true);
    const count = sim.truth().filter((item) => item.original_price !== null).length;
    expect(onSale).toHaveLength(count);
  });

  it('f[promotable] selects promotable items', async () => {
    const promotable = await filtered('f[promotable]=false');
    expect(promotable.length).toBeGreaterThan(0);
    expect(promotable.every((item) => item.promotable === false)).toBe(true);
  });

  it('f[price] is an inclusive range of whole units compared exactly', async () => {
    const cheap = await filtered('f[price]=0..1');
    const expected = sim.truth().filter((item) => Number(item.price) <= 1);
    expect(ids(cheap)).toEqual(expected.map((item) => item.id));
    expect(expected.some((item) => item.price === '0.3')).toBe(true);
  });

  it('f[category_ids] selects items in any of the categories', async () => {
    const items = await filtered('f[category_ids]=1,2');
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((item) => (item.category_ids as number[]).some((id) => id === 1 || id === 2))).toBe(
      true,
    );
  });

  it('f[shipping_to] selects items shipping to the country; filters combine', async () => {
    const items = await filtered('f[shipping_to]=IT&f.featured=false');
    expect(items.length).toBeGreaterThan(0);
    expect(
      items.every((item) => (item.shipping_to as string[]).includes('IT') && item.featured === false),
    ).toBe(true);
  });

  it.each([
    ['f[price]=10-50', 'f[price] must look like 10..50'],
    ['f[price]=50..10', 'f[price] must look like 10..50'],
    ['f.price=1.5..3', 'f[price] must look like 10..50'],
    ['f[shipping_to]=it', 'f[shipping_to] must be two uppercase letters'],
    ['f[featured]=yes', 'f[featured] must be true, false, 1 or 0'],
    ['f[on_sale]=', 'f[on_sale] must be true, false, 1 or 0'],
    ['f[category_ids]=a,b', 'f[category_ids] must be comma-separated integers'],
    ['f[colour]=red', 'unknown filter "f[colour]"'],
  ])('refuses %s with 422 invalid_filter', async (query, message) => {
    const body = await unprocessable(query);
    expect(body.error).toBe('invalid_filter');
    expect(body.message).toContain(message);
  });
});

describe('items and routes', () => {
  it('serves each item at its url and 404 once it is removed', async () => {
    const [first] = await listPage(sim, token, 'per_page=1');
    const path = new URL(String(first?.url)).pathname;
    const response = await getPath(sim, path, token);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(first);
    const { removed } = sim.mutate({ remove: 250 });
    expect(removed).toContain(first?.id);
    const gone = await getPath(sim, path, token);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ error: 'not_found', message: `item ${first?.id} was removed` });
    sim.mutate({ restore: removed });
    expect(sim.truth()).toHaveLength(250);
  });

  it('answers 401 for an item without a token and 404 JSON for unknown items and routes', async () => {
    expect((await getPath(sim, '/v1/items/whatever')).status).toBe(401);
    expect((await getPath(sim, '/v1/items/whatever', token)).status).toBe(404);
    const route = await getPath(sim, '/v1/shops', token);
    expect(route.status).toBe(404);
    expect(await route.json()).toMatchObject({ error: 'not_found', message: 'no route for GET /v1/shops' });
  });
});
