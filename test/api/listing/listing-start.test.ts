import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../../src/errors.js';
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
const IDS = Array.from({ length: 230 }, (_, i) => `item-${i}`);

/** The listing of `IDS` from page 1, with page 0 answered by `pageZero` (given page 1 and the last page). */
async function serving(pageZero: (pages: { first: string; last: string }) => ScriptedAnswer) {
  live.server = await startScripted((request) => {
    if (request.url.pathname === '/v1/oauth/token') return issuedToken(1);
    const baseUrl = live.server?.baseUrl ?? '';
    const perPage = Number(request.url.searchParams.get('per_page'));
    const body = (page: number) =>
      JSON.stringify(IDS.slice((page - 1) * perPage, page * perPage).map((id) => sampleItem(baseUrl, id)));
    const page = Number(request.url.searchParams.get('page'));
    if (page === 0) return pageZero({ first: body(1), last: body(Math.ceil(IDS.length / perPage)) });
    return { status: 200, body: body(page) };
  });
  return live.server;
}

describe('page 0, asked to prove that page 1 starts the listing', () => {
  it.each<[string, (pages: { first: string; last: string }) => ScriptedAnswer]>([
    ['refused with 404', () => ({ status: 404, body: '{"detail":"Invalid page."}' })],
    ['refused with 400', () => ({ status: 400, body: '{"error":"page must be positive"}' })],
    ['refused with 422', () => ({ status: 422, body: '{"error":"invalid_parameter"}' })],
    ['failing with 500 (a negative offset)', () => ({ status: 500, body: 'OFFSET must not be negative' })],
    ['answered with 204', () => ({ status: 204 })],
    ['answered with an empty list', () => ({ status: 200, body: '[]' })],
    ['answered with an empty body', () => ({ status: 200, body: '' })],
    ['answered with an object', () => ({ status: 200, body: '{"detail":"Invalid page."}' })],
    ['answered as page 1 (a server that clamps page)', ({ first }) => ({ status: 200, body: first })],
    ["answered as the last page (Django's Paginator.get_page)", ({ last }) => ({ status: 200, body: last })],
  ])('%s: every item is read', async (_kind, pageZero) => {
    const s = await serving(pageZero);
    live.client = scriptedClient(s.baseUrl);
    const reading = await readAll(live.client);
    expect(reading.items.map((item) => item.id)).toEqual(IDS);
    expect(s.listingPages().filter((page) => page === 0)).toEqual([0]);
  });

  it('fails in one sentence when page 0 lists items the listing from page 1 never shows', async () => {
    const s = await startScripted((request) => {
      if (request.url.pathname === '/v1/oauth/token') return issuedToken(1);
      const perPage = Number(request.url.searchParams.get('per_page'));
      const page = Number(request.url.searchParams.get('page'));
      const items = IDS.slice(page * perPage, (page + 1) * perPage).map((id) => sampleItem(s.baseUrl, id));
      return { status: 200, body: JSON.stringify(items) };
    });
    live.server = s;
    live.client = scriptedClient(s.baseUrl);
    const failure = readAll(live.client);
    await expect(failure).rejects.toThrow(ProtocolError);
    await expect(failure).rejects.toThrow(
      'The marketplace answered page 0 (GET /v1/sell/shop/items?page=0&per_page=100) with items that the listing read from page 1 never showed: it seems to number its pages from 0, so the listing cannot be read completely.',
    );
  });

  it('is asked beside page 1, not after the reading: no round trip of its own', async () => {
    const s = await serving(() => ({ status: 404, body: '{"detail":"Invalid page."}' }));
    live.client = scriptedClient(s.baseUrl);
    await readAll(live.client, { maxInFlight: 4 });
    const pages = s.listingPages();
    expect(pages.slice(0, 2)).toEqual([1, 0]);
    expect(pages.filter((page) => page === 0)).toEqual([0]);
  });

  it('fails the reading with its own error when page 0 cannot be read, once the rest is read', async () => {
    const s = await serving(() => ({ status: 503, body: 'upstream down' }));
    live.client = scriptedClient(s.baseUrl);
    await expect(readAll(live.client, { maxInFlight: 4 })).rejects.toThrow(/503/);
    expect(s.listingPages().filter((page) => page !== 0)).toContain(Math.ceil(IDS.length / 100));
  });
});
