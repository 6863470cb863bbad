import type { InvalidItem, Item } from '../../domain/item.js';
import type { UnchangedItem } from '../../domain/unchanged-item.js';
import { normaliseElement, type ParsedElement, readableId } from '../item/item-schema.js';
import type { RawPage } from './page-body.js';
import type { ItemPage } from './paginator.js';

/** One element of an answer as received, with its id (null when it has none worth reporting). */
export interface Received {
  readonly id: string | null;
  readonly element: ParsedElement;
}

/** The elements of an answer with their ids: what the planners decide on. */
export function receivedOf(raw: RawPage): Received[] {
  return raw.elements.map((element) => ({ id: readableId(element.json), element }));
}

/** What an `ItemPage` is made of once its elements are read; the rest (checkpoint, rereads) is the reader's. */
export type PageParts = Pick<
  ItemPage,
  'items' | 'sent' | 'unchanged' | 'invalid' | 'received' | 'duplicates'
>;

/**
 * The one way the readers make a page of `elements` (read as page `page`): each element with an id
 * that `fresh` says was yielded already is counted in `duplicates` and left out (`fresh` notes the
 * others as yielded); each other element is read as an item with its text's hash, as an item known
 * unchanged from its text alone, or as an element that is not an item.
 */
export function pageParts(
  page: number,
  elements: readonly Received[],
  fresh: (id: string) => boolean,
): PageParts {
  const items: Item[] = [];
  const sent: (number | undefined)[] = [];
  const unchanged: UnchangedItem[] = [];
  const invalid: InvalidItem[] = [];
  let duplicates = 0;
  for (const { id, element } of elements) {
    if (id !== null && !fresh(id)) duplicates += 1;
    else if (element.unchanged !== undefined && id !== null) unchanged.push({ id, ...element.unchanged });
    else {
      const result = normaliseElement(element, page);
      if (result.ok) {
        items.push(result.item);
        sent.push(element.sent);
      } else invalid.push(result.invalid);
    }
  }
  return { items, sent, unchanged, invalid, received: elements.length, duplicates };
}

/** The page's items (with their texts' hashes), unchanged items and invalid ones that `isNew` keeps. */
export function keptItems(
  page: ItemPage,
  isNew: (id: string | null) => boolean,
): Pick<ItemPage, 'items' | 'sent' | 'unchanged' | 'invalid'> {
  const kept: number[] = [];
  for (let index = 0; index < page.items.length; index += 1)
    if (isNew((page.items[index] as Item).id)) kept.push(index);
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
