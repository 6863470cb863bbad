import { parseDecimal } from '../../src/domain/decimal.js';
import type { SimItem, Simulator } from '../../src/simulator/index.js';

/** Small HTTP helpers for talking to the simulator the way any client would. */

export type Json = Record<string, unknown>;

export async function postToken(
  sim: Simulator,
  fields: Record<string, string>,
  encoding: 'form' | 'multipart' | 'json' = 'form',
): Promise<{ status: number; body: Json }> {
  let body: string | URLSearchParams | FormData;
  const headers: Record<string, string> = {};
  if (encoding === 'json') {
    body = JSON.stringify(fields);
    headers['content-type'] = 'application/json';
  } else if (encoding === 'multipart') {
    const form = new FormData();
    for (const [key, value] of Object.entries(fields)) form.append(key, value);
    body = form;
  } else {
    body = new URLSearchParams(fields);
  }
  const response = await fetch(`${sim.baseUrl}/v1/oauth/token`, { method: 'POST', body, headers });
  return { status: response.status, body: (await response.json()) as Json };
}

export function passwordFields(sim: Simulator): Record<string, string> {
  const { clientId, clientSecret, username, password } = sim.credentials;
  return { grant_type: 'password', client_id: clientId, client_secret: clientSecret, username, password };
}

export function clientFields(sim: Simulator): Record<string, string> {
  const { clientId, clientSecret } = sim.credentials;
  return { client_id: clientId, client_secret: clientSecret };
}

/** A password-grant token: the one the listing accepts. */
export async function sellToken(sim: Simulator): Promise<{ access: string; refresh: string }> {
  const { status, body } = await postToken(sim, passwordFields(sim));
  if (status !== 200) throw new Error(`password grant answered ${status}`);
  return { access: String(body.access_token), refresh: String(body.refresh_token) };
}

export async function getPath(sim: Simulator, path: string, token?: string): Promise<Response> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  return fetch(`${sim.baseUrl}${path}`, { headers });
}

export async function listPage(sim: Simulator, token: string, query: string): Promise<Json[]> {
  const response = await getPath(sim, `/v1/sell/shop/items?${query}`, token);
  if (response.status !== 200)
    throw new Error(`listing answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Json[];
}

/** Every page until the first empty one. */
export async function listAll(sim: Simulator, token: string, query = 'per_page=100'): Promise<Json[]> {
  const all: Json[] = [];
  for (let page = 1; ; page += 1) {
    const items = await listPage(sim, token, `${query}&page=${page}`);
    if (items.length === 0) return all;
    all.push(...items);
  }
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** The API's JSON item as a correct client normalises it: what `truth()` promises. */
export function normalise(raw: Json): SimItem {
  const shop = raw.shop as Json;
  const price = parseDecimal(raw.price as string | number);
  if (price === undefined) throw new Error(`unreadable price ${String(raw.price)}`);
  const original = raw.original_price === null ? null : parseDecimal(raw.original_price as string | number);
  if (original === undefined) throw new Error(`unreadable original_price ${String(raw.original_price)}`);
  const image = shop.image;
  return {
    id: String(raw.id),
    title: String(raw.title),
    price,
    original_price: original,
    currency: text(raw.currency),
    quantity: raw.quantity as number,
    published: raw.published !== false,
    created_at: String(raw.created_at),
    url: String(raw.url),
    web_url: text(raw.web_url),
    photos: raw.photos as string[],
    photos_id: (raw.photos_id as number[] | undefined) ?? [],
    description: text(raw.description),
    raw_description: text(raw.raw_description),
    fbcomments: text(raw.fbcomments),
    shop_id: String(shop.id),
    shop_name: String(shop.name),
    shop_url: String(shop.url),
    shop_image: typeof image === 'string' && image !== '' ? image : null,
    shop_items_url: String(shop.items_url),
  };
}
