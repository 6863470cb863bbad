import type { Item } from '../domain/item.js';
import { ApiError, ProtocolError } from '../errors.js';
import type { Store } from './open.js';
import { stageConfirmed, unstagedCurrentItems } from './staging.js';

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
  /** Items the listing did not show that are still there: staged, not retired. */
  stillPresent: number;
  /** Items confirmed gone: the commit retires them. */
  gone: number;
  /** Whether the listing was read a second time. */
  relisted: boolean;
}

/**
 * A listing that moves while it is read can skip items that are still there. Before the commit
 * retires an item of the previous snapshot that this run did not read, confirm it is gone: by its URL
 * (404) when there are few and their URLs can tell, otherwise by a second look at the listing. An
 * item found either way is staged with its current values. Correctness comes before speed.
 */
export async function confirmRemovals(
  store: Store,
  run: number,
  sources: RemovalSources,
  concurrency = 8,
): Promise<RemovalCheck> {
  const candidates = unstagedCurrentItems(store, run);
  const byUrl =
    sources.fetchItem && candidates.length <= sources.relistCost
      ? await lookUpAll(candidates, sources.fetchItem, concurrency)
      : { present: [], undecided: candidates };
  const relisted = byUrl.undecided.length > 0;
  const inListing = relisted ? await findInListing(byUrl.undecided, sources.relist) : [];
  const present = [...byUrl.present, ...inListing];
  stageConfirmed(store, run, present);
  return { stillPresent: present.length, gone: candidates.length - present.length, relisted };
}

interface Lookups {
  present: Item[];
  /** Items whose URL could not tell: another host, or an answer other than the item or a 404. */
  undecided: Item[];
}

async function lookUpAll(
  candidates: readonly Item[],
  fetchItem: FetchItem,
  concurrency: number,
): Promise<Lookups> {
  const result: Lookups = { present: [], undecided: [] };
  let next = 0;
  const worker = async () => {
    while (next < candidates.length) {
      const candidate = candidates[next++] as Item;
      try {
        const found = await fetchItem(candidate.url);
        if (found) result.present.push(found);
      } catch (error) {
        if (!(error instanceof ApiError || error instanceof ProtocolError)) throw error;
        result.undecided.push(candidate);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, candidates.length) }, worker));
  return result;
}

/** The candidates the listing shows on a second read; it stops as soon as all are found. */
async function findInListing(candidates: readonly Item[], relist: RemovalSources['relist']): Promise<Item[]> {
  const wanted = new Set(candidates.map((item) => item.id));
  const found: Item[] = [];
  for await (const page of relist()) {
    for (const item of page.items) {
      if (wanted.delete(item.id)) found.push(item);
    }
    if (wanted.size === 0) break;
  }
  return found;
}
