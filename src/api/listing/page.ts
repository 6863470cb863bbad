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

/**
 * Every reading of one page: each id once (in the order first seen, with its latest values), and the
 * elements without an id from the latest reading only (they cannot be matched across readings).
 */
export class PageReadings {
  private readonly byId = new Map<string, Received>();
  private unidentified: Received[] = [];
  private latest: readonly (string | null)[] = [];
  private readonly first: readonly (string | null)[];
  /** Whether the latest reading added has the same ids in the same order as the reading before it. */
  agrees = false;
  rereads = 0;
  /** Readings that held the whole page as the readings so far list it, in that order. */
  whole = 0;
  /** Whether every reading was the start of the page as the readings list it: all a still listing's
   * answers differ by is the last items a lossy one left out. */
  tailsOnly = true;

  constructor(
    readonly page: number,
    first: readonly Received[],
  ) {
    this.add(first);
    this.first = this.latest;
  }

  /** Adds a reading (an empty one, a false end, only counts as a disagreement). */
  add(reading: readonly Received[]): this {
    const ids = reading.map((received) => received.id);
    this.agrees = ids.length === this.latest.length && ids.every((id, i) => id === this.latest[i]);
    this.latest = ids;
    const unidentified = reading.filter((received) => received.id === null);
    if (reading.length > 0) this.unidentified = unidentified;
    const known = this.byId.size;
    for (const received of reading) if (received.id !== null) this.byId.set(received.id, received);
    this.countWhole(ids, this.byId.size > known);
    return this;
  }

  /** Notes whether `ids` (a reading just added, `grew`: with ids no reading before held) is the page's
   * start, or all of it. */
  private countWhole(ids: readonly (string | null)[], grew: boolean): void {
    const listed = [...this.byId.keys()];
    const start = ids.every((id, i) => id !== null && id === listed[i]);
    if (!start) this.tailsOnly = false;
    const whole = start && ids.length === listed.length ? 1 : 0;
    this.whole = grew ? whole : this.whole + whole;
  }

  /** The ids every reading held, in the order first read. */
  listedIds(): string[] {
    return [...this.byId.keys()];
  }

  /**
   * Whether the listing moved between the first reading and the latest: the first is not the start of
   * the latest (a reading that only leaves out the last items is a start of the whole page).
   */
  moved(): boolean {
    return !this.first.every((id, i) => id === this.latest[i]);
  }

  /** The ids of the latest reading, in order. */
  get latestIds(): readonly (string | null)[] {
    return this.latest;
  }

  get size(): number {
    return this.byId.size + this.unidentified.length;
  }

  ids(): IterableIterator<string> {
    return this.byId.keys();
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  elements(): Received[] {
    return [...this.byId.values(), ...this.unidentified];
  }
}
