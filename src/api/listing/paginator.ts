import type { InvalidItem, Item } from '../../domain/item.js';
import type { UnchangedItem } from '../../domain/unchanged-item.js';
import { ListingMovedError, ProtocolError, ResponseTooLargeError } from '../../errors.js';
import type { ListingCheckpoint } from './checkpoint.js';
import type { RawPage } from './page-body.js';
import type { ListingWindow } from './window.js';

/**
 * One page of the listing: every id of every reading of it, once. An element whose id the paginator
 * yielded lately (the listing moved while being read: the two pages before, or a planner's recent ids) is
 * left out of `items` and `invalid` and counted in `duplicates`, so `received = items.length +
 * invalid.length + duplicates`; `readListing` then leaves out, uncounted, any id the reading yielded
 * before (`YieldedIds`). `rereads` is how many extra readings of the page were made to confirm it.
 */
export interface ItemPage {
  readonly page: number;
  readonly items: Item[];
  readonly invalid: InvalidItem[];
  readonly received: number;
  readonly duplicates: number;
  readonly rereads: number;
  /** Where the reading stands once this page is taken (JSON of a `ListingCheckpoint`): what a run
   * keeps to resume from. */
  readonly checkpoint?: string;
  /** Items sent as the very text their stored version was read from (`ReadItemsOptions.known`). */
  readonly unchanged?: readonly UnchangedItem[];
  /** The hash of each of `items`' text as sent, in the same order, when it was taken. */
  readonly sent?: readonly (number | undefined)[];
}

export interface PageRequest {
  readonly signal?: AbortSignal;
  /** The reading's first page: the only one that cannot mark the end by answering something other than
   * a list (see PAST_END_STATUSES). */
  readonly first: boolean;
  /** Called when the server pushes back (429, 5xx), before the request is retried. */
  readonly pushedBack?: () => void;
}

export type FetchPage = (page: number, request: PageRequest) => Promise<RawPage>;

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
  /** How long the listing may outrun the reading (no progress towards its end) before the run fails
   * with `LISTING_MOVED`: the retry budget (`SYNC_RETRY_BUDGET_SECONDS`). */
  readonly budgetMs: number;
  /** Where an interrupted run's reading stopped. */
  readonly resume?: ListingCheckpoint;
  /** What a page lists: when given, page 1 is proved to start the listing (`ListingStart`). */
  readonly pageIds?: FetchPageIds;
  /**
   * How many items the shop's last complete run listed: windows are read ahead no further than that
   * until an answer proves an item past it (a hint for planning: what the answers prove decides the rest).
   */
  readonly listedBefore?: number;
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

/**
 * Every way a reading of the listing fails, decided here for all paginators: `WindowsMisaligned`
 * (above) hands the reading to the next paginator; a listing that kept moving is retried by the next
 * sync (`ListingMovedError`); a server that breaks the protocol fails the run until it is fixed
 * (`ProtocolError`), and so does a listing that never ends. Failures of single requests (outages,
 * throttling, cut bodies) are retried below, in `src/api/http`, before a paginator sees them.
 */
export const listingFailure = {
  endless: (requests: number) =>
    new ProtocolError(
      `The listing had not ended after ${requests} requests; stopped rather than read forever.`,
    ),
  /** `served`: what the server answered for `page` instead of its items. */
  pageIgnored: (page: number, served: string) =>
    new ProtocolError(
      `The marketplace served page ${page} with ${served}; it seems to ignore the page parameter, so the listing cannot be read completely.`,
    ),
  numberedFromZero: (shown: string) =>
    new ProtocolError(
      `The marketplace answered page 0 (${shown}) with items that the listing read from page 1 never showed: it seems to number its pages from 0, so the listing cannot be read completely.`,
    ),
  /** The reading came no closer to the listing's end for `seconds`, `backlog` items ahead (`Backlog`). */
  outgrown: (seconds: number, backlog: number) =>
    new ListingMovedError(
      `The listing grew faster than it could be read: for ${seconds} s (the retry budget, SYNC_RETRY_BUDGET_SECONDS) the reading came no closer to its end, ${backlog} items ahead, so the run stopped without claiming to be complete; the previous snapshot and feeds stay, and the next sync tries again.`,
    ),
  keptMoving: (passes: number) =>
    new ListingMovedError(
      `The listing kept changing: no two of ${passes} page-by-page passes read the same items; the next sync tries again.`,
    ),
  /** Whether an answer's failure is one the windows work around (by asking smaller pages). */
  tooLarge: (error: unknown): error is ResponseTooLargeError => error instanceof ResponseTooLargeError,
};
