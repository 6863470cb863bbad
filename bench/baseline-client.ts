import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

/**
 * The baseline every figure is compared with: log in, read every page of each shop with keep-alive
 * connections, `JSON.parse` it, nothing else. Run as its own process, measured like a sync:
 * `node dist/bench/baseline-client.js --shops FILE --in-flight K` prints a `BaselineWork`.
 */

export interface BaselineShop {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  username: string;
  password: string;
  items: number;
}

/** What the client prints: its work from the first login to the last page, without process start-up. */
export interface BaselineWork {
  items: number;
  pages: number;
  ms: number;
  cpuMs: number;
}

const PER_PAGE = 100;

async function login(pool: Pool, basePath: string, shop: BaselineShop): Promise<string> {
  const { statusCode, body } = await pool.request({
    method: 'POST',
    path: `${basePath}/v1/oauth/token`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'password',
      client_id: shop.clientId,
      client_secret: shop.clientSecret,
      username: shop.username,
      password: shop.password,
    }).toString(),
  });
  const answer = (await body.json()) as { access_token?: string };
  if (statusCode !== 200 || !answer.access_token)
    throw new Error(`login to ${shop.baseUrl} answered ${statusCode}`);
  return answer.access_token;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { shops: { type: 'string' }, 'in-flight': { type: 'string', default: '1' } },
  });
  const shops = JSON.parse(readFileSync(values.shops as string, 'utf8')) as BaselineShop[];
  const inFlight = Number(values['in-flight']);
  const origin = new URL(shops[0]?.baseUrl as string).origin;
  const pool = new Pool(origin, { connections: inFlight, pipelining: 1 });
  const tokens = new Map<BaselineShop, Promise<string>>();
  // Shop after shop, page after page: with K in flight, the next K requests of that order.
  const requests = shops.flatMap((shop) =>
    Array.from({ length: Math.max(1, Math.ceil(shop.items / PER_PAGE)) }, (_, i) => ({ shop, page: i + 1 })),
  );
  let next = 0;
  let items = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const reader = async () => {
    for (let request = requests[next++]; request; request = requests[next++]) {
      const { shop, page } = request;
      const basePath = new URL(shop.baseUrl).pathname.replace(/\/+$/, '');
      if (!tokens.has(shop)) tokens.set(shop, login(pool, basePath, shop));
      const token = await (tokens.get(shop) as Promise<string>);
      const { statusCode, body } = await pool.request({
        method: 'GET',
        path: `${basePath}/v1/sell/shop/items?per_page=${PER_PAGE}&page=${page}`,
        headers: { authorization: `Bearer ${token}` },
      });
      const parsed = JSON.parse(await body.text()) as unknown[];
      if (statusCode !== 200) throw new Error(`${shop.baseUrl} page ${page} answered ${statusCode}`);
      items += parsed.length;
    }
  };
  try {
    await Promise.all(Array.from({ length: inFlight }, reader));
  } finally {
    await pool.close();
  }
  const expected = shops.reduce((sum, shop) => sum + shop.items, 0);
  if (items !== expected) throw new Error(`read ${items} items, expected ${expected}`);
  const used = process.cpuUsage(cpu);
  const work: BaselineWork = {
    items,
    pages: requests.length,
    ms: Math.round(performance.now() - started),
    cpuMs: Math.round((used.user + used.system) / 1000),
  };
  process.stdout.write(`${JSON.stringify(work)}\n`);
}

await main();
