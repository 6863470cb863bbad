import { describe, expect, it } from 'vitest';
import { ApiError, ProtocolError } from '../../../src/errors.js';
import { closedAfterEach, readAll } from '../helpers.js';
import {
  issuedToken,
  type ScriptedAnswer,
  type ScriptedServer,
  sampleItem,
  scriptedClient,
  startScripted,
} from '../scripted-server.js';

const live = closedAfterEach<ScriptedServer>();

/** A marketplace serving `listing(page)` for each listing page from 1, with items built by `page()`
 * below; page 0 it refuses as Django REST Framework does. */
async function serving(listing: (page: number, baseUrl: string) => ScriptedAnswer): Promise<ScriptedServer> {
  live.server = await startScripted((request) => {
    if (request.url.pathname === '/v1/oauth/token') return issuedToken(1);
    const n = Number(request.url.searchParams.get('page'));
    if (n === 0) return { status: 404, body: '{"detail":"Invalid page."}' };
    return listing(n, live.server?.baseUrl ?? '');
  });
  return live.server;
}

/** A 200 page of `size` items whose ids start with `p<page>-`. */
function page(baseUrl: string, n: number, size = 3): ScriptedAnswer {
  const items = Array.from({ length: size }, (_, i) => sampleItem(baseUrl, `p${n}-${i}`));
  return { status: 200, body: JSON.stringify(items) };
}

const ids = (reading: Awaited<ReturnType<typeof readAll>>) => reading.items.map((item) => item.id);

describe('the end of the listing', () => {
  it.each([
    ['HTTP 404 (as Django REST Framework answers)', { status: 404, body: '{"detail":"Invalid page."}' }],
    ['HTTP 204', { status: 204 }],
    ['HTTP 200 with an empty body', { status: 200, body: '' }],
    ['HTTP 200 with null', { status: 200, body: 'null' }],
  ])('after a non-empty page is also %s', async (_name, end) => {
    const s = await serving((n, baseUrl) => (n <= 2 ? page(baseUrl, n) : end));
    live.client = scriptedClient(s.baseUrl);
    const reading = await readAll(live.client, { maxInFlight: 1 });
    expect(ids(reading)).toEqual(['p1-0', 'p1-1', 'p1-2', 'p2-0', 'p2-1', 'p2-2']);
    // The end is believed only after page 3 was asked again.
    expect(s.listingPages().filter((n) => n === 3).length).toBeGreaterThanOrEqual(2);
  });

  it('is the first end even when read-ahead already fetched pages after it', async () => {
    const s = await serving((n, baseUrl) => (n >= 3 ? { status: 404, body: '' } : page(baseUrl, n)));
    live.client = scriptedClient(s.baseUrl);
    const reading = await readAll(live.client, { maxInFlight: 4, maxRequests: 40 });
    expect(ids(reading)).toEqual(['p1-0', 'p1-1', 'p1-2', 'p2-0', 'p2-1', 'p2-2']);
  });

  it('is not a 404 on the first page: that stays an error with the server message', async () => {
    const s = await serving(() => ({ status: 404, body: '{"detail":"No such shop."}' }));
    live.client = scriptedClient(s.baseUrl);
    const failure = readAll(live.client);
    await expect(failure).rejects.toThrow(ApiError);
    await expect(failure).rejects.toThrow(
      'GET /v1/sell/shop/items?page=1&per_page=100 failed with HTTP 404: No such shop.',
    );
  });

  it('is not a 404 on the first page of a resumed reading either', async () => {
    const s = await serving(() => ({ status: 404, body: '{"detail":"Invalid page."}' }));
    live.client = scriptedClient(s.baseUrl);
    const resume = JSON.stringify({ end: 99, maxPerPage: 25, tail: ['p4-24'] });
    await expect(readAll(live.client, { perPage: 25, resume })).rejects.toThrow(
      'GET /v1/sell/shop/items?page=1&per_page=25 failed with HTTP 404: Invalid page.',
    );
  });
});

describe('a server that clamps the page number', () => {
  it('ends the listing when a page repeats the short last page', async () => {
    const s = await serving((n, baseUrl) => (n <= 2 ? page(baseUrl, n, 5) : page(baseUrl, 3, 2)));
    live.client = scriptedClient(s.baseUrl);
    const reading = await readAll(live.client, { maxInFlight: 3 });
    expect(ids(reading).slice(-2)).toEqual(['p3-0', 'p3-1']);
    expect(reading.items).toHaveLength(12);
  });

  it('ends the listing on a repeat of a one-item last page', async () => {
    const s = await serving((n, baseUrl) => (n === 1 ? page(baseUrl, 1, 4) : page(baseUrl, 2, 1)));
    live.client = scriptedClient(s.baseUrl);
    const reading = await readAll(live.client, { maxInFlight: 1 });
    expect(ids(reading)).toEqual(['p1-0', 'p1-1', 'p1-2', 'p1-3', 'p2-0']);
  });

  it('still fails on a repeat of a full page, which means the server ignores page', async () => {
    const s = await serving((_n, baseUrl) => page(baseUrl, 1, 4));
    live.client = scriptedClient(s.baseUrl);
    const failure = readAll(live.client, { maxInFlight: 1 });
    await expect(failure).rejects.toThrow(ProtocolError);
    await expect(failure).rejects.toThrow(
      /^The marketplace served page \d+ with (the items of page 1|only items already read \(4 of them\)); it seems to ignore the page parameter, so the listing cannot be read completely\.$/,
    );
  });
});

describe('a listing answered with an object', () => {
  it("quotes the server's message", async () => {
    const s = await serving(() => ({
      status: 200,
      body: '{"error":"shop_suspended","message":"shop suspended"}',
    }));
    live.client = scriptedClient(s.baseUrl);
    const failure = readAll(live.client);
    await expect(failure).rejects.toThrow(ProtocolError);
    await expect(failure).rejects.toThrow(
      'GET /v1/sell/shop/items?page=1&per_page=100 answered HTTP 200 with an object instead of a list of items: shop suspended',
    );
  });

  it('says only what it got when the object carries no message', async () => {
    const s = await serving(() => ({ status: 200, body: '{"results":[]}' }));
    live.client = scriptedClient(s.baseUrl);
    await expect(readAll(live.client)).rejects.toThrow(
      new ProtocolError(
        'GET /v1/sell/shop/items?page=1&per_page=100 answered HTTP 200 with an object instead of a list of items.',
      ),
    );
  });
});
