import type { Item } from '../domain/item.js';
import type { Store } from './open.js';
import { stageConfirmed, unstagedCurrentItems } from './staging.js';

export type FetchItem = (url: string) => Promise<Item | null>;

export interface RemovalCheck {
  /** Items the listing did not show that are still there: staged, not retired. */
  stillPresent: number;
  /** Items the marketplace answered 404 for: the commit retires them. */
  gone: number;
}

/**
 * A listing that moves while it is read can skip items that are still there. Before the commit
 * retires an item of the previous snapshot that this run did not read, ask the marketplace for it:
 * only an item that is really gone is retired; one that is still there is staged with its current
 * values. Every candidate is checked, however many there are: correctness comes before speed.
 */
export async function confirmRemovals(
  store: Store,
  run: number,
  fetchItem: FetchItem,
  concurrency = 8,
): Promise<RemovalCheck> {
  const candidates = unstagedCurrentItems(store, run);
  const present: Item[] = [];
  let next = 0;
  const worker = async () => {
    while (next < candidates.length) {
      const candidate = candidates[next++] as Item;
      const found = await fetchItem(candidate.url);
      if (found) present.push(found);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, candidates.length) }, worker));
  stageConfirmed(store, run, present);
  return { stillPresent: present.length, gone: candidates.length - present.length };
}
