import { setMaxListeners } from 'node:events';
import type { InvalidItem, Item } from '../domain/item.js';
import { ProtocolError, UsageError } from '../errors.js';
import { normaliseItem, readableId } from './item-schema.js';
import type { RawPage } from './listing-body.js';

/**
 * One page of the listing. Each id reaches the consumer once per reading: an element whose id was already
 * read (the listing moved while being read) is left out of `items` and `invalid` and counted in
 * `duplicates`. `received` counts every element the server sent, so
 * `received = items.length + invalid.length + duplicates`.
 */
export interface ItemPage {
  readonly page: number;
  readonly items: Item[];
  readonly invalid: InvalidItem[];
  readonly received: number;
  readonly duplicates: number;
  /** Extra readings of this page made to confirm it. */
  readonly rereads: number;
}

export interface PageReadOptions {
  /** The first page to read (1-based); a resumed run starts after its checkpoint. */
  readonly startPage?: number;
  /** Pages requested ahead of the one being consumed; 1 reads strictly one page after another. */
  readonly concurrency?: number;
  /** The most pages in flight at once, whatever the read-ahead would like. */
  readonly maxInFlight?: number;
  /** Pages read before giving up on ever seeing the end. */
  readonly maxPages?: number;
}

export const DEFAULT_MAX_PAGES = 100_000;
export const DEFAULT_CONCURRENCY = 4;

/** Fetches one page; `first` is the reading's first page, the only one that cannot mark the end by
 * answering something other than a list (see PAST_END_STATUSES). */
export type FetchPage = (page: number, signal: AbortSignal, first: boolean) => Promise<RawPage>;

type Settled = { ok: true; page: RawPage } | { ok: false; error: unknown };

/**
 * Reads pages from `startPage` until the first EMPTY page (a short page proves nothing: servers cap
 * `per_page` and shorten pages mid-listing) or the first repeat of a short last page (a server that
 * clamps `page`), yielding them in order. Up to `concurrency` pages are in
 * flight; memory is bounded by that window plus the set of ids read so far.
 */
export async function* readPages(
  fetchPage: FetchPage,
  options: PageReadOptions = {},
): AsyncGenerator<ItemPage> {
  const startPage = options.startPage ?? 1;
  const window = Math.min(options.concurrency ?? DEFAULT_CONCURRENCY, options.maxInFlight ?? Infinity);
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  checkOptions(startPage, window, maxPages);
  const lastPage = startPage + maxPages - 1;
  const abort = new AbortController();
  // Each page in flight listens for the abort twice (its request and its retry wait).
  setMaxListeners(Math.max(10, window * 2 + 2), abort.signal);
  const inFlight: Promise<Settled>[] = [];
  const guard = new RepeatGuard();
  let next = startPage;
  const fill = () => {
    while (inFlight.length < window && next <= lastPage) {
      inFlight.push(
        fetchPage(next, abort.signal, next === startPage).then(
          (page): Settled => ({ ok: true, page }),
          (error: unknown): Settled => ({ ok: false, error }),
        ),
      );
      next += 1;
    }
  };
  try {
    for (let page = startPage; ; page += 1) {
      fill();
      const head = inFlight.shift();
      if (!head) {
        throw new ProtocolError(
          `The listing had no empty page after ${maxPages} pages (pages ${startPage}..${lastPage}); stopped rather than read forever.`,
        );
      }
      const settled = await head;
      if (!settled.ok) throw settled.error;
      if (settled.page.elements.length === 0) return;
      const result = guard.read(page, settled.page);
      if (result === undefined) return;
      fill();
      yield result;
    }
  } finally {
    abort.abort();
    await Promise.all(inFlight);
  }
}

function checkOptions(startPage: number, window: number, maxPages: number): void {
  const positive = (n: number) => Number.isInteger(n) && n >= 1;
  if (!positive(startPage)) throw new UsageError(`startPage must be a positive integer, got ${startPage}`);
  if (!positive(window)) throw new UsageError(`concurrency must be a positive integer, got ${window}`);
  if (!positive(maxPages)) throw new UsageError(`maxPages must be a positive integer, got ${maxPages}`);
}

/**
 * Normalises pages, drops ids already read, and stops a server that ignores `page`: such a server
 * serves the same items again and again, which would otherwise be read until the page cap. A page made
 * only of ids already read can happen once when many items are inserted while reading; the same ids as
 * the page before, or two such pages in a row, cannot. The one exception is a server that clamps `page`
 * to its last page: it repeats that page, which is shorter than the pages before it, past the end.
 */
class RepeatGuard {
  private readonly seen = new Set<string>();
  private previousIds: string[] = [];
  private largestPage = 0;
  private repeatedPages = 0;

  /** The page normalised, or undefined when it repeats the short last page and so ends the listing. */
  read(page: number, raw: RawPage): ItemPage | undefined {
    const ids = raw.elements.map((element, index) => readableId(element, raw.texts[index] ?? ''));
    const known = ids.filter((id): id is string => id !== null);
    const allSeen = known.length === ids.length && known.every((id) => this.seen.has(id));
    if (allSeen && this.repeatsShortLastPage(known)) return undefined;
    if (allSeen) this.failIfLooping(page, known);
    else this.repeatedPages = 0;
    this.previousIds = known;
    this.largestPage = Math.max(this.largestPage, ids.length);
    return this.normalise(page, raw, ids);
  }

  private repeatsShortLastPage(ids: string[]): boolean {
    const previous = this.previousIds;
    return previous.length < this.largestPage && ids.join('\n') === previous.join('\n');
  }

  private failIfLooping(page: number, ids: string[]): void {
    this.repeatedPages += 1;
    const sameAsBefore = ids.length > 1 && ids.join('\n') === this.previousIds.join('\n');
    if (sameAsBefore || this.repeatedPages >= 2) {
      throw new ProtocolError(
        `The marketplace served page ${page} with only items already read (${ids.length} of them); it seems to ignore the page parameter, so the listing cannot be read completely.`,
      );
    }
  }

  private normalise(page: number, raw: RawPage, ids: (string | null)[]): ItemPage {
    const items: Item[] = [];
    const invalid: InvalidItem[] = [];
    let duplicates = 0;
    raw.elements.forEach((element, index) => {
      const id = ids[index] ?? null;
      if (id !== null && this.seen.has(id)) {
        duplicates += 1;
        return;
      }
      if (id !== null) this.seen.add(id);
      const result = normaliseItem(element, raw.texts[index] ?? '', page);
      if (result.ok) items.push(result.item);
      else invalid.push(result.invalid);
    });
    return { page, items, invalid, received: raw.elements.length, duplicates, rereads: 0 };
  }
}
