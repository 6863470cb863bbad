import type { ParsedElement } from '../item/item-schema.js';
import { keptItems, type PageReadings } from './page.js';
import type { RawPage } from './page-body.js';
import { PassOutrun, readPages } from './page-by-page.js';
import {
  type FetchPage,
  type FetchWindow,
  listingFailure,
  type PageRequest,
  type Paginator,
} from './paginator.js';
import type { ListingWindow } from './window.js';

/** Page-by-page passes over a listing whose windows cannot overlap, before two in a row read the same. */
const MAX_PASSES = 4;

/** One page as a pass read it: its ids in order, and how its readings agreed (see `PageReadings`). */
interface PassPage {
  readonly ids: readonly string[];
  readonly whole: number;
  readonly tailsOnly: boolean;
}

/**
 * The listing read page by page, again and again until two passes in a row read the same items in the
 * same pages (see `samePages`): the listing held still for the second of them, so it missed nothing. A
 * pass that the listing outran (`PassOutrun`) counts as one of them and agrees with none. For a server
 * whose pages do not start at `(page - 1) * per_page`, or a listing that moves too fast for windows to
 * keep up with it.
 */
export const readInPasses: Paginator = async function* readInPasses(fetch, options) {
  const perPage = options.perPage;
  const byPage: FetchPage = (page, request) =>
    pageOrItems(fetch, { page, perPage, start: (page - 1) * perPage }, request);
  let previous: PassPage[] | undefined;
  for (let pass = 1; pass <= MAX_PASSES; pass += 1) {
    const pages: PassPage[] = [];
    const settled = (readings: PageReadings) =>
      pages.push({ ids: readings.listedIds(), whole: readings.whole, tailsOnly: readings.tailsOnly });
    try {
      for await (const page of readPages(byPage, {
        maxInFlight: options.maxInFlight,
        pageSize: perPage,
        maxPages: options.maxRequests,
        settled,
      })) {
        // An item without an id cannot be matched across passes: only the first pass's are yielded.
        // Items read in an earlier pass, `readListing` leaves out.
        yield pass === 1 ? page : { ...page, ...keptItems(page, (id) => id !== null) };
      }
    } catch (error) {
      if (!(error instanceof PassOutrun)) throw error;
      // The listing moved ahead of this pass: it read only part of the listing, which no pass can
      // agree with, and the next pass reads it all again.
      previous = undefined;
      continue;
    }
    if (previous !== undefined && samePages(previous, pages, perPage)) return;
    previous = pages;
  }
  throw listingFailure.keptMoving(MAX_PASSES);
};

/**
 * Whether two passes read the same pages: each page the same ids in the same order, or, on a page whose
 * readings only ever left out its last items (a lossy answer), one pass's page the start of the other's,
 * the longer one whole: `perPage` items (no answer holds more), or answered so at least twice, as a page
 * is confirmed within a pass. A move shows otherwise: items listed or sold before a page shift its first
 * items, and those of every page after it. Both passes' items are yielded, so the one that read a page
 * whole holds it for both. A page of a pass is wrong when all of its answers were cut (one in a
 * thousand of a tenth of answers lossy), and the passes of a long listing then rarely matched in a row:
 * the run failed on a listing that held still.
 */
function samePages(a: readonly PassPage[], b: readonly PassPage[], perPage: number): boolean {
  return a.length === b.length && a.every((page, i) => samePage(page, b[i] as PassPage, perPage));
}

function samePage(a: PassPage, b: PassPage, perPage: number): boolean {
  if (a.ids.length === b.ids.length) return a.ids.every((id, i) => id === b.ids[i]);
  if (!a.tailsOnly || !b.tailsOnly) return false;
  const [shorter, longer] = a.ids.length < b.ids.length ? [a, b] : [b, a];
  const whole = longer.ids.length >= perPage || longer.whole >= 2;
  return whole && shorter.ids.every((id, i) => id === longer.ids[i]);
}

/**
 * The answer to `window`, or, when it exceeds the response cap, its items read one at a time: an item
 * that alone exceeds the cap takes its place as an element that cannot be read (reported invalid).
 */
async function pageOrItems(
  fetch: FetchWindow,
  window: ListingWindow,
  request: PageRequest,
): Promise<RawPage> {
  try {
    return await fetch(window, request);
  } catch (error) {
    if (!listingFailure.tooLarge(error) || window.perPage === 1) throw error;
  }
  const elements: ParsedElement[] = [];
  for (let offset = window.start; offset < window.start + window.perPage; offset += 1) {
    const one = { page: offset + 1, perPage: 1, start: offset };
    try {
      const answer = await fetch(one, { ...request, first: offset === 0 });
      if (answer.elements.length === 0) break;
      elements.push(...answer.elements);
    } catch (error) {
      if (!listingFailure.tooLarge(error)) throw error;
      elements.push(tooLargeToRead(offset, error.capBytes));
    }
  }
  return { elements };
}

function tooLargeToRead(offset: number, capBytes: number): ParsedElement {
  const cap = capBytes % MIB === 0 ? `${capBytes / MIB} MiB` : `${capBytes}-byte`;
  return {
    json: undefined,
    raw: '',
    unreadable: `the item at position ${offset + 1} of the listing alone is larger than the ${cap} response cap, so it cannot be read`,
  };
}

const MIB = 1024 * 1024;
