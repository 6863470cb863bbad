import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { MarketplaceClient } from '../../src/api/client.js';
import { InterruptedError } from '../../src/errors.js';
import { readAll } from './helpers.js';
import {
  issuedToken,
  type ScriptedRequest,
  type ScriptedServer,
  scriptedClient,
  startScripted,
} from './scripted-server.js';

// Budgets of a minute: a call that ends within the test's few seconds was ended by the stop.
const PATIENT = { budgetMs: 60_000, baseDelayMs: 1, maxDelayMs: 20 };

let server: ScriptedServer | undefined;
let client: MarketplaceClient | undefined;

afterEach(async () => {
  await server?.close();
  await client?.close();
  client = undefined;
  server = undefined;
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(5);
}

const isToken = (r: ScriptedRequest) => r.url.pathname === '/v1/oauth/token';

describe('the client-wide stop signal', () => {
  it('ends a request whose response is still arriving with InterruptedError', async () => {
    server = await startScripted((r) =>
      isToken(r) ? issuedToken(1) : { status: 200, body: JSON.stringify({ items: [] }), dripMs: 500 },
    );
    const stop = new AbortController();
    client = scriptedClient(server.baseUrl, { signal: stop.signal, retry: PATIENT });
    const reading = readAll(client);
    const s = server;
    await until(() => s.listingPages().length > 0);
    stop.abort();
    await expect(reading).rejects.toThrow(InterruptedError);
    await expect(reading).rejects.toThrow(
      'GET /v1/sell/shop/items?page=1&per_page=100 was stopped: shop-sync was asked to stop.',
    );
  });

  it('ends the wait between retries', async () => {
    server = await startScripted((r) =>
      isToken(r) ? issuedToken(1) : { status: 503, body: 'busy', headers: { 'retry-after': '30' } },
    );
    const stop = new AbortController();
    client = scriptedClient(server.baseUrl, { signal: stop.signal, retry: PATIENT });
    const fetching = client.fetchItem('/v1/items/a');
    const s = server;
    await until(() => s.requests.some((r) => !isToken(r)));
    stop.abort();
    await expect(fetching).rejects.toThrow(InterruptedError);
    expect(s.requests.filter((r) => !isToken(r))).toHaveLength(1);
  });

  it('ends a token renewal and every request waiting for it, and refuses later calls without a request', async () => {
    // The token endpoint never answers: one request logs in, the others wait for its renewal.
    server = await startScripted((r) => (isToken(r) ? new Promise<never>(() => undefined) : { status: 500 }));
    const stop = new AbortController();
    client = scriptedClient(server.baseUrl, { signal: stop.signal, retry: PATIENT });
    const c = client;
    const waiting = ['a', 'b', 'c'].map((id) => c.fetchItem(`/v1/items/${id}`));
    const s = server;
    await until(() => s.requests.length > 0);
    stop.abort();
    const results = await Promise.allSettled(waiting);
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(InterruptedError);
    }
    await expect(c.fetchItem('/v1/items/d')).rejects.toThrow(InterruptedError);
    expect(s.requests.filter(isToken)).toHaveLength(1);
    expect(s.requests.filter((r) => !isToken(r))).toEqual([]);
  });
});
