import { afterEach, describe, expect, it } from 'vitest';
import { readPages } from '../../../src/api/listing/page-by-page.js';
import type { FetchPage } from '../../../src/api/listing/paginator.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { listPage, sellToken } from '../../simulator/client.js';
import { clientFor, readAll } from '../helpers.js';

/**
 * A still listing served through short pages (the next page starts where a short one ended) and lossy
 * ones (an answer leaves out a page's last items), read page by page: what the reader falls back to when
 * short pages shift the pages after them, so that no window starts where `page`/`per_page` says.
 */
let sim: Simulator | undefined;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** The simulator's listing, page by page at `perPage`, as plain HTTP answers. */
async function pagesOf(server: Simulator, perPage: number): Promise<FetchPage> {
  const { access } = await sellToken(server);
  return async (page) => {
    const items = await listPage(server, access, `page=${page}&per_page=${perPage}`);
    return { elements: items.map((json) => ({ json, raw: JSON.stringify(json) })) };
  };
}

describe('a page-by-page pass over short and lossy pages', () => {
  it('reads a cut first page again though the pages after it are as short as its cut answer', async () => {
    // Seed 45 at 5 a page: pages of 2, 1, 1 and 3 items. Page 1's first answer leaves out its last
    // item, so the first three answers hold one item each: that is no page size the server serves,
    // since it was asked for 5 and page 1, asked again, holds 2.
    sim = await startSimulator({ items: 30, seed: 45, faults: { shortPageRate: 0.5, lossyShortPages: [1] } });
    const read: string[] = [];
    for await (const page of readPages(await pagesOf(sim, 5), { maxInFlight: 1, pageSize: 5 })) {
      for (const item of page.items) read.push(item.id);
    }
    expect(sim.stats().faultsInjected.lossyShortPage).toBe(1);
    expect(read).toEqual(sim.listedIds());
  });
});

describe('page-by-page passes over a still listing', () => {
  // Found by the hostile-listing draws (bench/faults/listing-draws.ts): 25 pages' worth of 5 items, half of
  // them short, and a tenth of the answers lossy. The windows hand over (short pages shift the pages after
  // them); on main no two passes in a row read the same items, each missing a different page's last item
  // (the first page, cut, taken for whole; a page whose three answers were all cut), and the run failed
  // with LISTING_MOVED on a listing that never moved.
  it('reads it whole where passes differ only by the last items of a page that one of them left out', async () => {
    sim = await startSimulator({
      items: 124,
      seed: 685373928,
      faults: { shortPageRate: 0.5, lossyShortPageRate: 0.1 },
    });
    const client = clientFor(sim);
    try {
      const reading = await readAll(client, { perPage: 5, maxInFlight: 3 });
      expect(reading.items.map((item) => item.id).sort()).toEqual([...sim.listedIds()].sort());
    } finally {
      await client.close();
    }
  });
});
