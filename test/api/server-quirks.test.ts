import { describe, expect, it } from 'vitest';
import { ApiError, ProtocolError } from '../../src/errors.js';
import { closedAfterEach, readAll } from './helpers.js';
import {
  CREDENTIALS,
  issuedToken,
  type ScriptedAnswer,
  type ScriptedRequest,
  type ScriptedServer,
  sampleItem,
  scriptedClient,
  startScripted,
} from './scripted-server.js';

const live = closedAfterEach<ScriptedServer>();

async function serving(answer: (request: ScriptedRequest, baseUrl: string) => ScriptedAnswer) {
  live.server = await startScripted((request) =>
    request.url.pathname === '/v1/oauth/token' ? issuedToken(1) : answer(request, live.server?.baseUrl ?? ''),
  );
  return live.server;
}

/** An item's JSON text with `literals` spliced in as written, e.g. `"price":12345678901234567.89`. */
function itemText(baseUrl: string, id: string, literals: string): string {
  return JSON.stringify(sampleItem(baseUrl, id, { price: 0 })).replace('"price":0', literals);
}

describe('numbers a double cannot hold', () => {
  it('keeps numeric ids above 2^53 apart and prices exact to the last digit', async () => {
    const s = await serving((request, baseUrl) => {
      if (request.url.searchParams.get('page') !== '1') return { status: 200, body: '[]' };
      const first = itemText(baseUrl, 'x', '"price":12345678901234567.89').replace(
        '"id":"x"',
        '"id":9007199254740993',
      );
      const second = itemText(baseUrl, 'y', '"price":0.1000000000000000055511151231257827').replace(
        '"id":"y"',
        '"id":9007199254740992',
      );
      return { status: 200, body: `[${first},${second}]` };
    });
    live.client = scriptedClient(s.baseUrl);
    const reading = await readAll(live.client);
    expect(reading.items.map((item) => [item.id, item.price])).toEqual([
      ['9007199254740993', '12345678901234567.89'],
      ['9007199254740992', '0.1000000000000000055511151231257827'],
    ]);
  });
});

describe('a rate limit longer than the retry budget', () => {
  it('says how long the server asked to wait and what the budget is', async () => {
    const s = await serving(() => ({
      status: 429,
      body: '{"detail":"slow down"}',
      headers: { 'retry-after': '3600' },
    }));
    live.client = scriptedClient(s.baseUrl, { retry: { budgetMs: 120_000 } });
    const failure = readAll(live.client);
    await expect(failure).rejects.toThrow(ApiError);
    await expect(failure).rejects.toThrow(
      /^GET \/v1\/sell\/shop\/items\?page=1&per_page=100 failed with HTTP 429 after 1 attempt in [\d.]+ s \(budget 120 s\): slow down; the server asked to wait 3600 s, beyond the retry budget of 120 s$/,
    );
    expect(s.listingPages()).toEqual([1]);
  });
});

describe('secrets echoed URL-encoded', () => {
  it('are kept out of error messages', async () => {
    const echoed = new URLSearchParams({ p: CREDENTIALS.password }).toString().slice(2);
    const s = await serving(() => ({ status: 400, body: `{"detail":"no account matches ${echoed}"}` }));
    live.client = scriptedClient(s.baseUrl);
    const failure = readAll(live.client);
    await expect(failure).rejects.toThrow('failed with HTTP 400: no account matches [redacted]');
    await failure.catch((error: Error) => {
      expect(error.message).not.toContain(encodeURIComponent(CREDENTIALS.password));
      expect(error.message).not.toContain('owner+password');
    });
  });
});

describe('an item with a relative url', () => {
  it('is fetched from below the base URL', async () => {
    const s = await serving((request, baseUrl) =>
      request.url.pathname === '/v1/items/r3'
        ? { status: 200, body: JSON.stringify(sampleItem(baseUrl, 'r3', { url: '/v1/items/r3' })) }
        : { status: 404, body: '' },
    );
    live.client = scriptedClient(s.baseUrl);
    const item = await live.client.fetchItem('/v1/items/r3');
    expect(item?.id).toBe('r3');
    expect(await live.client.fetchItem('/v1/items/gone')).toBeNull();
  });

  it('is named with its real address when refused', async () => {
    const s = await serving(() => ({ status: 500, body: '' }));
    live.client = scriptedClient(`${s.baseUrl}/market`);
    const failure = live.client.fetchItem('/v1/items/r3?token=abcd');
    await expect(failure).rejects.toThrow(ProtocolError);
    await expect(failure).rejects.toThrow(
      `Refusing to fetch ${s.baseUrl}/v1/items/r3?token=[redacted]: it is not below MARKETPLACE_BASE_URL, and the token must not be sent elsewhere.`,
    );
    expect(s.requests).toEqual([]);
  });
});
