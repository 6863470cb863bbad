import { setMaxListeners } from 'node:events';
import { UsageError } from '../../errors.js';
import { AdaptiveWindow, ReadAhead, Slots } from './driver.js';
import { PageReadings, pageParts, type Received, receivedOf } from './page.js';
import type { RawPage } from './page-body.js';
import { type FetchPage, type ItemPage, listingFailure, type PageRequest } from './paginator.js';

export interface PageReadOptions {
  /** The most listing requests in flight at once (read-ahead and re-reads); 1 reads one page at a time. */
  readonly maxInFlight?: number;
  /** Pages read before giving up on ever seeing the end. */
  readonly maxPages?: number;
  /** The `per_page` asked for, if any: a page that long is whole whatever the other pages hold. */
  readonly pageSize?: number;
  /** Told every reading of each page as it is yielded (for passes that compare what pages held). */
  readonly settled?: (readings: PageReadings) => void;
}

export const DEFAULT_MAX_PAGES = 100_000;
export const DEFAULT_MAX_IN_FLIGHT = 8;
/** Readings of a page beyond the first before its union is taken as it stands (a listing that moves on
 * every request never answers the same twice). */
const MAX_REREADS = 5;

/**
 * Reads pages from page 1 to the end of the listing, yielding them in order. Nothing about one
 * answer is believed on its own:
 * - a page is held back until its successor is known; a page that may be short (see `mayBeShort`) and
 *   is followed by a non-empty page is read again until two readings agree (a server may leave out the
 *   last items of one answer), and the page yields every id of every reading;
 * - when the listing moved while a page was read (see `ListingGuard.moved`), every page already
 *   requested after it is read once more: the server may have answered them before the move;
 * - an empty page (or a 404 or 204 after the first page) is asked again, and the last page read again,
 *   before the end is believed; a server that repeats a short last page for every later page (it clamps
 *   `page`) ends there too;
 * - pages of only items already read, beyond what insertions in a still-moving listing usually make, are
 *   told apart by page 1 read again (see `blame`): a server that ignores `page` fails the reading
 *   (`ProtocolError`), a listing that moved ahead of it ends this pass (`PassOutrun`).
 * Up to `maxInFlight` requests are in flight, the read-ahead window adapting between 1 and that.
 */
export async function* readPages(
  fetchPage: FetchPage,
  options: PageReadOptions = {},
): AsyncGenerator<ItemPage> {
  const maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  checkOptions(maxInFlight, maxPages);
  const abort = new AbortController();
  // Each request in flight listens for the abort twice (its request and its retry wait).
  setMaxListeners(Math.max(10, maxInFlight * 2 + 2), abort.signal);
  const window = new AdaptiveWindow(maxInFlight);
  const slots = new Slots(maxInFlight);
  const request = (page: number): PageRequest => ({
    signal: abort.signal,
    first: page === 1,
    pushedBack: () => window.shrink(),
  });
  const fetch = (page: number) => slots.run(() => fetchPage(page, request(page)));
  const read = async (page: number) => receivedOf(await fetch(page));
  const ahead = new ReadAhead(fetch, 1, maxPages, window);
  const guard = new ListingGuard(options.pageSize);
  const finish = (readings: PageReadings): ItemPage => {
    options.settled?.(readings);
    return guard.finish(readings);
  };
  let held: PageReadings | undefined;
  /** Pages up to this one are read once more: they may have been served before the listing moved. */
  let rereadThrough = 0;
  try {
    for (;;) {
      const next = await ahead.take();
      if (!next) throw listingFailure.endless(maxPages);
      let reading = receivedOf(next.raw);
      const reasked = reading.length === 0;
      if (reasked) reading = await askAgain(next.page, held, read, guard);
      const repeat = held && reading.length > 0 ? guard.repeat(reading, held) : 'new';
      if (reading.length === 0 || repeat === 'end') {
        if (held) yield finish(held.add(reading));
        return;
      }
      if (repeat === 'suspect') await blame(next.page, reading, read);
      guard.measure(reading.length);
      if (held) {
        if (guard.mayBeShort(held)) await confirm(held, read, guard);
        if (guard.moved(held)) rereadThrough = Math.max(rereadThrough, ahead.requested);
        yield finish(held);
      }
      held = new PageReadings(next.page, reading);
      if (reasked) held.rereads += 1;
      if (held.page <= rereadThrough) await rereadOnce(held, read);
    }
  } finally {
    abort.abort();
    await ahead.drain();
  }
}

/**
 * The listing moved ahead of a page-by-page pass: items listed before the reader pushed what it had read
 * onto the pages after it, so those pages hold only items already read. Reading on, the pass would read
 * them again, and as long as the listing keeps moving that fast it would never reach the end; the pass
 * proves nothing anyway (the listing did not hold still), so the next one starts over (`readInPasses`).
 */
export class PassOutrun extends Error {}

/**
 * `reading` (of `page`) holds only items already read, as a server that ignores `page` answers. Such a
 * server answers page 1 again: asked now, page 1 holds the same items. A listing that moved holds others
 * there (what was listed since, or what page 1 holds anyway when the move was further down).
 */
async function blame(
  page: number,
  reading: readonly Received[],
  read: (page: number) => Promise<Received[]>,
): Promise<never> {
  const first = await read(1);
  const samePage = first.length === reading.length && first.every((item, i) => item.id === reading[i]?.id);
  if (samePage) throw listingFailure.pageIgnored(page, 'the items of page 1');
  throw new PassOutrun(`page ${page} held only items already read: the listing moved ahead of the reading`);
}

/**
 * Asks for an empty `page` again, confirming the page before it (`held`) meanwhile. When the listing
 * moved while `held` was read again, whatever that pushed out lands on `page`: asked once more.
 */
async function askAgain(
  page: number,
  held: PageReadings | undefined,
  read: (page: number) => Promise<Received[]>,
  guard: ListingGuard,
): Promise<Received[]> {
  const [again] = await Promise.all([read(page), held && confirm(held, read, guard)]);
  return again.length === 0 && held && guard.moved(held) ? read(page) : again;
}

async function rereadOnce(held: PageReadings, read: (page: number) => Promise<Received[]>): Promise<void> {
  held.rereads += 1;
  held.add(await read(held.page));
}

/**
 * Reads `held` again until two readings in a row agree. A short page is read at least twice more: two
 * answers that leave out the same items are rarer than one, and any whole answer among them is kept.
 */
async function confirm(
  held: PageReadings,
  read: (page: number) => Promise<Received[]>,
  guard: ListingGuard,
): Promise<void> {
  const minimum = guard.mayBeShort(held) ? 2 : 1;
  for (let n = 1; n <= MAX_REREADS; n += 1) {
    held.rereads += 1;
    if (held.add(await read(held.page)).agrees && n >= minimum) return;
  }
}

function checkOptions(maxInFlight: number, maxPages: number): void {
  const positive = (n: number) => Number.isInteger(n) && n >= 1;
  if (!positive(maxInFlight))
    throw new UsageError(`maxInFlight must be a positive integer, got ${maxInFlight}`);
  if (!positive(maxPages)) throw new UsageError(`maxPages must be a positive integer, got ${maxPages}`);
}

/** One page as the server answered it, with no other page to compare it with (for `check`). */
export function singlePage(page: number, raw: RawPage): ItemPage {
  return new ListingGuard().finish(new PageReadings(page, receivedOf(raw)));
}

/**
 * Remembers the ids of the last two pages yielded (no more: memory stays bounded), drops their repeats,
 * and tells a server that clamps `page` to its last page (it repeats that page, shorter than the pages
 * before it, past the end) from pages that hold only items already read. A page made only of ids just
 * read happens when items are inserted while reading, twice in a row when pages hold one or two items;
 * the same ids as the page before (more than one), or three such pages in a row, need more: a server that
 * ignores `page` (it serves the same items again and again, which would otherwise be read until the page
 * cap), or a listing that moved by pages at once (a busy shop, several answers in flight). Those are
 * `suspect`, and `blame` tells which.
 */
class ListingGuard {
  private recent: ReadonlySet<string>[] = [];
  private repeatedPages = 0;
  private largest = 0;
  /** Pages of the largest size seen: two of them make it the server's page size. */
  private largestPages = 0;

  constructor(private readonly pageSize?: number) {}

  measure(size: number): void {
    if (size > this.largest) {
      this.largest = size;
      this.largestPages = 0;
    }
    if (size === this.largest) this.largestPages += 1;
  }

  /**
   * Whether `held` may hold fewer items than the server's page size: it is shorter than the largest page
   * seen, or that size is not yet known (seen on fewer than two pages besides `held`, and below the
   * `per_page` asked). A page cannot vouch for its own size: a first page whose answer left out its last
   * item, followed by a short page as long as that answer, made a page size of the cut and was never
   * read again (the next pages then showed the server's own).
   */
  mayBeShort(held: PageReadings): boolean {
    if (held.size < this.largest) return true;
    const others = this.largestPages - (held.size === this.largest ? 1 : 0);
    return others < 2 && (this.pageSize === undefined || held.size < this.pageSize);
  }

  /**
   * What `reading` (the page after `held`) holds: `end`, a repeat of the short last page, which ends the
   * listing; `suspect`, only items already read, more of them than insertions alone explain (see the
   * class); `new`, anything else.
   */
  repeat(reading: readonly Received[], held: PageReadings): 'end' | 'suspect' | 'new' {
    const ids = reading.map((received) => received.id);
    const allSeen = ids.every(
      (id) => id !== null && (held.has(id) || this.recent.some((set) => set.has(id))),
    );
    if (!allSeen) {
      this.repeatedPages = 0;
      return 'new';
    }
    const latest = held.latestIds;
    const sameAsHeld = ids.length === latest.length && ids.every((id, i) => id === latest[i]);
    if (sameAsHeld && held.size < this.largest) return 'end';
    this.repeatedPages += 1;
    return (sameAsHeld && ids.length > 1) || this.repeatedPages >= 3 ? 'suspect' : 'new';
  }

  /**
   * Whether the listing moved while `held` was read: its readings disagree beyond a lost tail, or it
   * repeats ids of the pages before it (items inserted ahead of it pushed them here). A page after it
   * that the server answered before the move then misses what the move pushed out of `held`.
   */
  moved(held: PageReadings): boolean {
    if (held.moved()) return true;
    for (const id of held.ids()) if (this.recent.some((set) => set.has(id))) return true;
    return false;
  }

  finish(held: PageReadings): ItemPage {
    const ids = new Set<string>();
    const fresh = (id: string) => !this.recent.some((set) => set.has(id)) && ids.add(id) !== undefined;
    const parts = pageParts(held.page, held.elements(), fresh);
    this.recent = [this.recent.at(-1) ?? new Set(), ids];
    return { page: held.page, ...parts, rereads: held.rereads };
  }
}
