import { ListingMovedError } from '../../errors.js';
import { type FetchPage, type ItemPage, type PageRequest, readPages } from '../items.js';
import type { RawPage } from '../listing-body.js';
import type { ListingCheckpoint } from './checkpoint.js';
import { readProved, WindowsMisaligned } from './proved-reader.js';
import type { ListingWindow } from './window.js';

export interface ListingReadOptions {
  readonly perPage: number;
  readonly maxInFlight: number;
  readonly maxRequests: number;
  readonly resume?: ListingCheckpoint;
}

/** Page-by-page passes over a listing whose windows cannot overlap, before one that adds nothing. */
const MAX_PASSES = 4;

/**
 * Every item listed from the first request to the last, by overlapping windows (`readProved`). A server
 * whose pages do not start at `(page - 1) * per_page` cannot be read that way: its listing is read page
 * by page, again and again until a whole pass finds no item the passes before it missed.
 */
export async function* readListing(
  fetch: (window: ListingWindow, request: PageRequest) => Promise<RawPage>,
  options: ListingReadOptions,
): AsyncGenerator<ItemPage> {
  let pages = 0;
  const seen = new Set<string>();
  try {
    for await (const page of readProved(fetch, options)) {
      pages = page.page;
      for (const item of page.items) seen.add(item.id);
      yield page;
    }
    return;
  } catch (error) {
    if (!(error instanceof WindowsMisaligned)) throw error;
  }
  const perPage = options.perPage;
  const byPage: FetchPage = (page, request) => fetch({ page, perPage, start: (page - 1) * perPage }, request);
  for (let pass = 1; pass <= MAX_PASSES; pass += 1) {
    let found = 0;
    for await (const page of readPages(byPage, {
      maxInFlight: options.maxInFlight,
      pageSize: perPage,
      maxPages: options.maxRequests,
    })) {
      // Later passes yield only what the passes before them missed.
      const isNew = (id: string | null) =>
        id === null ? pass === 1 : !seen.has(id) && seen.add(id) !== undefined;
      const items = page.items.filter((item) => isNew(item.id));
      const invalid = page.invalid.filter((bad) => isNew(bad.id));
      if (pass > 1) found += items.length + invalid.length;
      pages += 1;
      yield { ...page, page: pages, items, invalid };
    }
    if (pass > 1 && found === 0) return;
  }
  throw new ListingMovedError(
    `The listing kept changing: ${MAX_PASSES} page-by-page passes each found items the others missed; the next sync tries again.`,
  );
}
