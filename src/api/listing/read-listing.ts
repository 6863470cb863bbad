import { ListingMovedError, ResponseTooLargeError } from '../../errors.js';
import type { ParsedElement } from '../item-schema.js';
import { type FetchPage, type ItemPage, type PageRequest, readPages } from '../items.js';
import type { RawPage } from '../listing-body.js';
import type { ListingCheckpoint } from './checkpoint.js';
import { type FetchWindow, readProved, WindowsMisaligned } from './proved-reader.js';
import type { ListingWindow } from './window.js';

export interface ListingReadOptions {
  readonly perPage: number;
  readonly maxInFlight: number;
  readonly maxRequests: number;
  readonly resume?: ListingCheckpoint;
}

/** Page-by-page passes over a listing whose windows cannot overlap, before two in a row read the same. */
const MAX_PASSES = 4;

/**
 * Every item listed from the first request to the last, by overlapping windows (`readProved`). A server
 * whose pages do not start at `(page - 1) * per_page`, or that moves too fast for windows to keep up
 * with it, is read page by page instead, again and again until two passes in a row read the same items
 * in the same order: the listing held still for the second of them, so it missed nothing.
 */
export async function* readListing(
  fetch: FetchWindow,
  options: ListingReadOptions,
): AsyncGenerator<ItemPage> {
  let pages = 0;
  const seen = new Set<string>();
  try {
    for await (const page of readProved(fetch, options)) {
      pages = page.page;
      for (const item of page.items) seen.add(item.id);
      for (const item of page.unchanged ?? []) seen.add(item.id);
      yield page;
    }
    return;
  } catch (error) {
    if (!(error instanceof WindowsMisaligned)) throw error;
  }
  const perPage = options.perPage;
  const byPage: FetchPage = (page, request) =>
    pageOrItems(fetch, { page, perPage, start: (page - 1) * perPage }, request);
  let previous: string[] | undefined;
  for (let pass = 1; pass <= MAX_PASSES; pass += 1) {
    const sequence: string[] = [];
    for await (const page of readPages(byPage, {
      maxInFlight: options.maxInFlight,
      pageSize: perPage,
      maxPages: options.maxRequests,
    })) {
      for (const item of page.items) sequence.push(item.id);
      for (const item of page.unchanged ?? []) sequence.push(item.id);
      for (const bad of page.invalid) if (bad.id !== null) sequence.push(bad.id);
      // Later passes yield only what the passes before them missed.
      const isNew = (id: string | null) =>
        id === null ? pass === 1 : !seen.has(id) && seen.add(id) !== undefined;
      pages += 1;
      yield {
        ...page,
        page: pages,
        ...newItems(page, isNew),
        invalid: page.invalid.filter((bad) => isNew(bad.id)),
      };
    }
    if (previous !== undefined && sameSequence(previous, sequence)) return;
    previous = sequence;
  }
  throw new ListingMovedError(
    `The listing kept changing: no two of ${MAX_PASSES} page-by-page passes read the same items; the next sync tries again.`,
  );
}

/** The page's items (with their texts' hashes) and unchanged items that `isNew` keeps. */
function newItems(
  page: ItemPage,
  isNew: (id: string) => boolean,
): Pick<ItemPage, 'items' | 'sent' | 'unchanged'> {
  const kept = page.items.flatMap((item, index) => (isNew(item.id) ? [index] : []));
  return {
    items: kept.map((index) => page.items[index] as ItemPage['items'][number]),
    sent: kept.map((index) => page.sent?.[index]),
    unchanged: page.unchanged?.filter((item) => isNew(item.id)),
  };
}

function sameSequence(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
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
    if (!(error instanceof ResponseTooLargeError) || window.perPage === 1) throw error;
  }
  const elements: ParsedElement[] = [];
  for (let offset = window.start; offset < window.start + window.perPage; offset += 1) {
    const one = { page: offset + 1, perPage: 1, start: offset };
    try {
      const answer = await fetch(one, { ...request, first: offset === 0 });
      if (answer.elements.length === 0) break;
      elements.push(...answer.elements);
    } catch (error) {
      if (!(error instanceof ResponseTooLargeError)) throw error;
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
