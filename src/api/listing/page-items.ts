import type { InvalidItem, Item } from '../../domain/item.js';
import type { UnchangedItem } from '../../domain/unchanged-item.js';
import { normaliseElement } from '../item/item-schema.js';
import type { Received } from './page-readings.js';

/** What the elements of one page read as: items with their texts' hashes, items known unchanged from
 * their text alone, and the elements that are not items. */
export class PageItems {
  readonly items: Item[] = [];
  readonly sent: (number | undefined)[] = [];
  readonly unchanged: UnchangedItem[] = [];
  readonly invalid: InvalidItem[] = [];

  /** Reads one element of page `page`. */
  add({ id, element }: Received, page: number): void {
    if (element.unchanged !== undefined && id !== null) {
      this.unchanged.push({ id, ...element.unchanged });
      return;
    }
    const result = normaliseElement(element, page);
    if (result.ok) {
      this.items.push(result.item);
      this.sent.push(element.sent);
    } else this.invalid.push(result.invalid);
  }
}
