import type { Item } from '../domain/item.js';
import { ApiError, InvalidItemError, ProtocolError } from '../errors.js';
import {
  closeRemoved,
  forEachCandidateSlice,
  isRemovalCandidate,
  keepCandidates,
  unreadableIds,
} from '../store/candidates.js';
import type { Store } from '../store/open.js';
import { stageConfirmed, stageInvalidAtUrl } from '../store/staging.js';

/** The item at `url`: null when the marketplace says it is gone. */
export type FetchItem = (url: string) => Promise<Item | null>;

/** Where a removal can be confirmed: the items' own URLs, and the listing read once more. */
export interface RemovalSources {
  /** Absent when an item's URL cannot settle it (a filtered listing: an item may exist, yet not be listed). */
  readonly fetchItem?: FetchItem;
  /** The listing from its first page, as this run read it. */
  readonly relist: () => AsyncIterable<{ readonly items: readonly Item[] }>;
  /** Requests one more read of the listing costs: asking item by item is worth it only below this. */
  readonly relistCost: number;
}

export interface RemovalCheck {
  /** Items the listing did not show that are still there: written, not retired. */
  stillPresent: number;
  /**
   * Items the listing did not show that were kept at their last version: their URL answered an item
   * that cannot be read, or the listing held items without a readable id that may be them.
   */
  kept: number;
  /** Items confirmed gone: retired by this run (visible once it is complete). */
  gone: number;
  /** Whether the listing was read a second time. */
  relisted: boolean;
}

/**
 * A listing that moves while it is read can skip items that are still there. Before the commit
 * retires an item of the previous snapshot that this run did not read, confirm it is gone: by its URL
 * (404) when there are few and their URLs can tell, otherwise by a second look at the listing. An
 * item found either way is written with its current values; the others are retired by this run.
 * Correctness comes before speed. Only candidates few enough to look up one by one are held in
 * memory; a second look at the listing asks the store about each item instead.
 */
export async function confirmRemovals(
  store: Store,
  run: number,
  sources: RemovalSources,
  concurrency = 8,
): Promise<RemovalCheck> {
  const few: Item[] = [];
  let count = 0;
  await forEachCandidateSlice(store, run, (candidates) => {
    count += candidates.length;
    if (few.length <= sources.relistCost)
      few.push(...candidates.slice(0, sources.relistCost + 1 - few.length));
  });
  if (count === 0) return { stillPresent: 0, gone: 0, kept: 0, relisted: false };
  let present = 0;
  let kept = 0;
  const goneAtUrl = new Set<string>();
  let wanted: WantedItems = { size: count, has: (id) => isRemovalCandidate(store, run, id) };
  if (sources.fetchItem && count <= sources.relistCost) {
    const byUrl = await lookUpAll(few, sources.fetchItem, concurrency);
    stageConfirmed(store, run, byUrl.present);
    stageInvalidAtUrl(store, run, byUrl.invalid);
    present += byUrl.present.length;
    kept += byUrl.invalid.length;
    for (const id of byUrl.gone) goneAtUrl.add(id);
    const undecided = new Set(byUrl.undecided.map((item) => item.id));
    wanted = { size: undecided.size, has: (id) => undecided.delete(id) };
  }
  const relisted = wanted.size > 0;
  if (relisted) present += await findInListing(store, run, wanted, sources.relist);
  // An item whose id could not be read may be any candidate: only its own URL's 404 proves one gone.
  if (unreadableIds(store, run) > 0) kept += await keepCandidates(store, run, goneAtUrl);
  const gone = await closeRemoved(store, run);
  return { stillPresent: present, gone, kept, relisted };
}

/** The candidates a second look at the listing is for. */
interface WantedItems {
  readonly size: number;
  /** Whether `id` is wanted and not yet found. */
  has(id: string): boolean;
}

interface Lookups {
  present: Item[];
  /** Items whose URL answered a 404 or 410. */
  gone: string[];
  /** Items whose URL answered an item that cannot be read: there, but invalid. */
  invalid: Array<{ id: string; reason: string }>;
  /** Items whose URL could not tell: another host, or an answer other than the item or a 404. */
  undecided: Item[];
}

async function lookUpAll(
  candidates: readonly Item[],
  fetchItem: FetchItem,
  concurrency: number,
): Promise<Lookups> {
  const result: Lookups = { present: [], gone: [], invalid: [], undecided: [] };
  let next = 0;
  const worker = async () => {
    while (next < candidates.length) {
      const candidate = candidates[next++] as Item;
      try {
        const found = await fetchItem(candidate.url);
        if (found) result.present.push(found);
        else result.gone.push(candidate.id);
      } catch (error) {
        if (error instanceof InvalidItemError) {
          result.invalid.push({ id: candidate.id, reason: error.reason });
          continue;
        }
        if (!(error instanceof ApiError || error instanceof ProtocolError)) throw error;
        result.undecided.push(candidate);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, candidates.length) }, worker));
  return result;
}

/**
 * Writes the wanted items a second read of the listing shows, page by page; it stops as soon as all
 * are found. Returns how many were found.
 */
async function findInListing(
  store: Store,
  run: number,
  wanted: WantedItems,
  relist: RemovalSources['relist'],
): Promise<number> {
  let found = 0;
  for await (const page of relist()) {
    const onPage = new Set<string>();
    const present = page.items.filter(
      (item) => !onPage.has(item.id) && onPage.add(item.id) && wanted.has(item.id),
    );
    stageConfirmed(store, run, present);
    found += present.length;
    if (found >= wanted.size) break;
  }
  return found;
}
