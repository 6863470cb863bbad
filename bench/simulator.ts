import { Pool } from 'undici';
import { type Simulator, startSimulator } from '../src/simulator/index.js';

export interface SimulatorBenchOptions {
  /** Catalogue size; default 100,000. */
  items?: number;
  perPage?: number;
  /** How long to measure, after a warm-up pass; default 3,000 ms. */
  durationMs?: number;
  /** Requests in flight at once, over as many keep-alive connections; default 8. */
  concurrency?: number;
  /** Render every item's JSON before the first pass, as `shop-sync simulate` does in the background. */
  prerender?: boolean;
}

export interface SimulatorBenchResult {
  /** Steady state: every item's JSON already rendered. */
  pagesPerSecond: number;
  itemsPerSecond: number;
  /** The first pass over the catalogue, which renders each item's JSON once. */
  firstPassPagesPerSecond: number;
}

async function token(sim: Simulator, pool: Pool): Promise<string> {
  const { clientId, clientSecret, username, password } = sim.credentials;
  const { body } = await pool.request({
    method: 'POST',
    path: '/v1/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'password',
      client_id: clientId,
      client_secret: clientSecret,
      username,
      password,
    }).toString(),
  });
  return ((await body.json()) as { access_token: string }).access_token;
}

/**
 * Pages per second the simulator serves to a keep-alive client in the same process (one core for
 * both sides), reading the catalogue page after page and wrapping around at the end.
 */
export async function measureSimulatorPagesPerSecond(
  options: SimulatorBenchOptions = {},
): Promise<SimulatorBenchResult> {
  const { items = 100_000, perPage = 100, durationMs = 3000, concurrency = 8, prerender = false } = options;
  const sim = await startSimulator({ items, perPageCap: perPage });
  if (prerender) await sim.prerender();
  const pool = new Pool(sim.baseUrl, { connections: concurrency });
  try {
    const headers = { authorization: `Bearer ${await token(sim, pool)}` };
    const pages = Math.max(1, Math.ceil(items / perPage));
    let next = 0;
    let served = 0;
    let received = 0;
    const worker = async (until: number) => {
      while (performance.now() < until && next < stopAfter) {
        const page = (next++ % pages) + 1;
        const { statusCode, body } = await pool.request({
          method: 'GET',
          path: `/v1/sell/shop/items?per_page=${perPage}&page=${page}`,
          headers,
        });
        for await (const chunk of body) received += (chunk as Buffer).length;
        if (statusCode !== 200) throw new Error(`page ${page} answered ${statusCode}`);
        served += 1;
      }
    };
    let stopAfter = pages;
    const run = async (ms: number) => {
      const until = performance.now() + ms;
      await Promise.all(Array.from({ length: concurrency }, () => worker(until)));
    };
    // Warm-up: one pass renders every item once, as in a simulator that has been serving a while.
    const firstPassStarted = performance.now();
    await run(Number.POSITIVE_INFINITY);
    const firstPassPagesPerSecond = served / ((performance.now() - firstPassStarted) / 1000);
    served = 0;
    stopAfter = Number.POSITIVE_INFINITY;
    const started = performance.now();
    await run(durationMs);
    const seconds = (performance.now() - started) / 1000;
    if (received === 0) throw new Error('no bytes received');
    return {
      pagesPerSecond: served / seconds,
      itemsPerSecond: (served * perPage) / seconds,
      firstPassPagesPerSecond,
    };
  } finally {
    await pool.close();
    await sim.close();
  }
}
