import { afterEach, describe, expect, it } from 'vitest';
import type { FetchWindow, ListingReadOptions } from '../../../src/api/listing/paginator.js';
import { readInPasses } from '../../../src/api/listing/passes.js';
import { ListingMovedError, ProtocolError } from '../../../src/errors.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { listPage, sellToken } from '../../simulator/client.js';

/**
 * The page-by-page passes (what the reader falls back to when windows cannot work) over a listing that
 * moved forward by three pages while it was read: the three pages after the move hold only items already
 * read. That is what a busy shop does between two answers (items listed at the front of the newest-first
 * listing), and nothing like a server that ignores `page`, which answers page 1 again for every page.
 */
const PER_PAGE = 10;
let sim: Simulator | undefined;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** The simulator's listing, page by page, as plain HTTP answers (the passes need nothing else). */
async function pagesOf(server: Simulator): Promise<FetchWindow> {
  const { access } = await sellToken(server);
  return async (window) => {
    const items = await listPage(server, access, `page=${window.page}&per_page=${window.perPage}`);
    return { elements: items.map((json) => ({ json, raw: JSON.stringify(json) })) };
  };
}

const OPTIONS: ListingReadOptions = {
  perPage: PER_PAGE,
  maxInFlight: 1,
  maxRequests: 1_000,
  budgetMs: 30_000,
};

/** What became of a reading: null when it ended, else its error. */
async function outcome(reading: Promise<void>): Promise<unknown> {
  return reading.then(
    () => null,
    (error: unknown) => error,
  );
}

describe('page by page, a listing that moved ahead of the reader', () => {
  it('is read whole with every survivor when it moved by three pages at once, not blamed on the server', async () => {
    sim = await startSimulator({ items: 300, seed: 11 });
    const server = sim;
    const atStart = server.listedIds();
    const since = server.churnLog().at(-1)?.seq ?? 0;
    const read = new Set<string>();
    let moved = false;
    const failure = await outcome(
      (async () => {
        for await (const page of readInPasses(await pagesOf(server), OPTIONS)) {
          for (const item of page.items) read.add(item.id);
          // One request at a time and none in flight while a page is taken: the move lands between two
          // answers, after page 6 was read (page 5 is handed out once page 6 is known), and is the same
          // every run. Three pages of new items at the front push pages 4 to 6 where pages 7 to 9 are.
          if (moved || page.page !== 5) continue;
          server.churnNow({ insertAt: Array.from({ length: 3 * PER_PAGE }, () => 0) });
          moved = true;
        }
      })(),
    );
    expect(moved).toBe(true);
    expect(String(failure)).not.toMatch(/ignore the page parameter/);
    // The listing held still after the move: nothing keeps the reading from completing.
    expect(failure).toBeNull();
    const everListed = new Set([...atStart, ...server.churnLog(since).map((change) => change.id)]);
    expect(atStart.filter((id) => !read.has(id))).toEqual([]);
    expect([...read].filter((id) => !everListed.has(id))).toEqual([]);
  });

  it('fails as a moving listing, retryable, when a page of items is listed at the front after every answer', async () => {
    sim = await startSimulator({ items: 300, seed: 11 });
    const fetchWindow = await pagesOf(sim);
    sim.setFaults({ churn: { insertAt: Array.from({ length: PER_PAGE }, () => 0) } });
    const failure = await outcome(
      (async () => {
        for await (const _page of readInPasses(fetchWindow, OPTIONS));
      })(),
    );
    expect(String(failure)).not.toMatch(/ignore the page parameter/);
    expect(failure).toBeInstanceOf(ListingMovedError);
    expect(failure).toMatchObject({ code: 'LISTING_MOVED', retryable: true });
  });

  it('still reports a server that ignores page', async () => {
    sim = await startSimulator({ items: 300, seed: 11, faults: { ignorePage: true } });
    const fetchWindow = await pagesOf(sim);
    const failure = (async () => {
      for await (const _page of readInPasses(fetchWindow, OPTIONS));
    })();
    await expect(failure).rejects.toThrow(ProtocolError);
    await expect(failure).rejects.toThrow(
      /^The marketplace served page 2 with .+; it seems to ignore the page parameter, so the listing cannot be read completely\.$/,
    );
  });
});
