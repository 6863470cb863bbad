import { readingPerPage } from './checkpoint.js';
import { ListingStart } from './listing-start.js';
import { keptItems } from './page.js';
import {
  type FetchWindow,
  type ItemPage,
  type ListingReadOptions,
  type Paginator,
  WindowsMisaligned,
} from './paginator.js';
import { readInPasses } from './passes.js';
import { readProved } from './proved-reader.js';
import { YieldedIds } from './yielded-ids.js';

/**
 * Overlapping windows first, which prove that no item slipped past the reader however the listing
 * moves, at a few percent more requests; page-by-page passes where windows cannot work. The last one
 * never gives up with `WindowsMisaligned`.
 */
const PAGINATORS: readonly Paginator[] = [readProved, readInPasses];

/**
 * Every item listed from the first request to the last (see the paginators). A paginator that gives
 * up hands over to the next, which yields only what was not yet yielded (an item without an id cannot
 * be matched, and is yielded as each paginator reads it). With `pageIds`, the reading fails at its
 * end unless page 1 was proved to start the listing (`ListingStart`).
 */
export async function* readListing(
  fetch: FetchWindow,
  options: ListingReadOptions,
): AsyncGenerator<ItemPage> {
  let pages = 0;
  const yielded = new YieldedIds();
  const isNew = (id: string | null) => id === null || yielded.add(id);
  const start =
    options.pageIds &&
    new ListingStart(options.pageIds, readingPerPage(options.perPage, options.resume), options.maxInFlight);
  const watched = start ? start.watch(fetch) : fetch;
  for (const paginator of PAGINATORS) {
    try {
      for await (const page of paginator(watched, options)) {
        pages += 1;
        yield { ...page, page: pages, ...keptItems(page, isNew) };
      }
      await start?.settle(yielded);
      return;
    } catch (error) {
      if (!(error instanceof WindowsMisaligned)) throw error;
    }
  }
}
