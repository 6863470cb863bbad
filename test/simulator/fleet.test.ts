import { afterEach, describe, expect, it } from 'vitest';
import { type AdminServer, type Fleet, startAdmin, startFleet } from '../../src/simulator/index.js';

async function login(baseUrl: string, username: string, password: string): Promise<Response> {
  return fetch(`${baseUrl}/v1/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'password',
      client_id: 'demo-client',
      client_secret: 'demo-secret',
      username,
      password,
    }),
  });
}

describe('a fleet of shops behind one simulator', () => {
  let fleet: Fleet | undefined;
  let admin: AdminServer | undefined;
  afterEach(async () => {
    await admin?.close();
    await fleet?.close();
  });

  it('serves each shop at its own path with its own login, and counts every login', async () => {
    fleet = await startFleet({ items: 5, perPageCap: 100 }, 2);
    const [one, two] = fleet.shops;
    expect(two?.baseUrl).toBe(`${fleet.baseUrl}/shops/2`);
    expect(two?.credentials.username).toBe('shop-2-owner');
    const refused = await login(one?.baseUrl as string, 'shop-2-owner', 'shop-2-password');
    expect(refused.status).toBe(400);
    const granted = await login(two?.baseUrl as string, 'shop-2-owner', 'shop-2-password');
    const { access_token } = (await granted.json()) as { access_token: string };
    const page = await fetch(`${two?.baseUrl}/v1/sell/shop/items?per_page=100`, {
      headers: { authorization: `Bearer ${access_token}` },
    });
    const items = (await page.json()) as Array<{ url: string }>;
    expect(items).toHaveLength(5);
    expect(items[0]?.url.startsWith(`${two?.baseUrl}/v1/items/`)).toBe(true);
    const elsewhere = await fetch(`${one?.baseUrl}/v1/sell/shop/items`, {
      headers: { authorization: `Bearer ${access_token}` },
    });
    expect(elsewhere.status).toBe(401);
    expect((await fetch(`${fleet.baseUrl}/shops/3/v1/sell/shop/items`)).status).toBe(404);
    expect(fleet.stats().tokenRequests.password).toBe(1);
    expect(fleet.stats().tokenRefusals).toBe(1);
  });

  it('is mutated, slowed and read through the admin port, which names a shop that does not exist', async () => {
    fleet = await startFleet({ items: 20 }, 2);
    let ready = false;
    admin = await startAdmin(fleet, () => ready, '127.0.0.1', 0);
    expect((await fetch(`${admin.url}/ready`)).status).toBe(503);
    ready = true;
    expect((await fetch(`${admin.url}/ready`)).status).toBe(200);
    const mutated = await fetch(`${admin.url}/mutate?shop=2`, { method: 'POST', body: '{"prices":3}' });
    expect(await mutated.json()).toEqual({ added: 0, removed: 0, updated: 3 });
    const poison = JSON.stringify({ poison: [{ id: 'nope', field: 'price', json: '"1e999999999"' }] });
    const unlisted = await fetch(`${admin.url}/mutate?shop=1`, { method: 'POST', body: poison });
    expect(unlisted.status).toBe(400);
    expect(((await unlisted.json()) as { message: string }).message).toBe(
      'cannot poison nope: it is not listed',
    );
    const missing = await fetch(`${admin.url}/mutate?shop=3`, { method: 'POST', body: '{"prices":1}' });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { message: string }).message).toBe('no shop 3 in a fleet of 2');
    expect((await fetch(`${admin.url}/faults`, { method: 'POST', body: '{"latencyMs":7}' })).status).toBe(
      200,
    );
    const refused = await fetch(`${admin.url}/faults`, { method: 'POST', body: '{"latencyMs":-1}' });
    expect(refused.status).toBe(400);
    await fetch(`${fleet.shops[1]?.baseUrl}/v1/sell/shop/items`);
    const stats = (await (await fetch(`${admin.url}/stats`)).json()) as { requests: number };
    expect(stats.requests).toBe(1);
  });
});
