import type { Item } from '../../domain/item.js';
import type { ListingCheckpoint } from './checkpoint.js';
import type { RawPage } from './page-body.js';
import type { ItemPage, PageRequest } from './page-by-page.js';
import type { ListingWindow } from './window.js';

/** What a paginator asks the client for: the answer to one window of the listing. */
export type FetchWindow = (window: ListingWindow, request: PageRequest) => Promise<RawPage>;

/** The ids page `page` lists at `perPage` items a page, asked as `shown`; none where the server says there
 * is no such page (see `ListingStart`). */
export type FetchPageIds = (
  page: number,
  perPage: number,
) => Promise<{ readonly ids: readonly string[]; readonly shown: string }>;

export interface ListingReadOptions {
  /** The largest `per_page` to ask for. */
  readonly perPage: number;
  readonly maxInFlight: number;
  /** Listing requests before giving up on ever seeing the end. */
  readonly maxRequests: number;
  /** Where an interrupted run's reading stopped. */
  readonly resume?: ListingCheckpoint;
  /** What a page lists: when given, page 1 is proved to start the listing (`ListingStart`). */
  readonly pageIds?: FetchPageIds;
}

/**
 * One way to read a whole listing into pages of items (as dlt's paginators are, for a REST source): it
 * decides which windows to ask for, and when the listing has ended. `readListing` tries its paginators
 * in turn; one that finds it cannot read this listing throws `WindowsMisaligned`, and the next takes
 * over from what was read.
 */
export type Paginator = (fetch: FetchWindow, options: ListingReadOptions) => AsyncGenerator<ItemPage>;

/**
 * Why the listing cannot be read by overlapping windows: its pages do not start at `(page - 1) *
 * per_page` (short pages that shift the pages after them, or `per_page` ignored), it moves too fast
 * for any answer to hold a proved item, or an item alone exceeds the response cap. The next paginator
 * reads it page by page instead.
 */
export class WindowsMisaligned extends Error {}

/** The page's items (with their texts' hashes), unchanged items and invalid ones that `isNew` keeps. */
export function keptItems(
  page: ItemPage,
  isNew: (id: string | null) => boolean,
): Pick<ItemPage, 'items' | 'sent' | 'unchanged' | 'invalid'> {
  const kept = page.items.flatMap((item, index) => (isNew(item.id) ? [index] : []));
  const all = kept.length === page.items.length;
  return {
    items: all ? page.items : kept.map((index) => page.items[index] as Item),
    sent: all ? page.sent : kept.map((index) => page.sent?.[index]),
    unchanged: page.unchanged?.filter((item) => isNew(item.id)),
    invalid: page.invalid.filter((bad) => isNew(bad.id)),
  };
}

/** Every id a page yields as read: its items, its unchanged items and its invalid items with an id. */
export function pageIds(page: ItemPage): string[] {
  const ids = page.items.map((item) => item.id);
  for (const item of page.unchanged ?? []) ids.push(item.id);
  for (const bad of page.invalid) if (bad.id !== null) ids.push(bad.id);
  return ids;
}
