import type { Change } from '../domain/change.js';
import type { Item } from '../domain/item.js';

/** What one CSV cell holds before it is written: null is written as the empty field. */
export type CellValue = string | number | boolean | null;

export interface CsvColumn<Row> {
  readonly name: string;
  /**
   * Text cells get the spreadsheet formula guard; numeric and boolean cells never do, so that a
   * negative price stays `-1.5` and parses as a number.
   */
  readonly text: boolean;
  readonly value: (row: Row) => CellValue;
}

const text = <Row>(name: string, value: (row: Row) => CellValue): CsvColumn<Row> => ({
  name,
  text: true,
  value,
});
const data = <Row>(name: string, value: (row: Row) => CellValue): CsvColumn<Row> => ({
  name,
  text: false,
  value,
});

/** `inventory.csv`, in the contract's order. */
export const INVENTORY_COLUMNS: readonly CsvColumn<Item>[] = Object.freeze([
  text<Item>('id', (i) => i.id),
  text<Item>('title', (i) => i.title),
  data<Item>('price', (i) => i.price),
  data<Item>('original_price', (i) => i.original_price),
  text<Item>('currency', (i) => i.currency),
  data<Item>('quantity', (i) => i.quantity),
  data<Item>('published', (i) => i.published),
  text<Item>('created_at', (i) => i.created_at),
  text<Item>('url', (i) => i.url),
  text<Item>('web_url', (i) => i.web_url),
  text<Item>('photos', (i) => i.photos.join(' ')),
  text<Item>('description', (i) => i.description),
  text<Item>('shop_id', (i) => i.shop_id),
]);

/**
 * `changes.csv`, in the contract's order. Before/after cells are filled for every change that has
 * that side (an update shows both values even when only other fields changed); empty otherwise.
 */
export const CHANGES_COLUMNS: readonly CsvColumn<Change>[] = Object.freeze([
  text<Change>('change', (c) => c.change),
  text<Change>('id', (c) => c.id),
  text<Change>('title', (c) => c.title),
  text<Change>('changed_fields', (c) => c.fields.join('|')),
  data<Change>('price_before', (c) => c.before?.price ?? null),
  data<Change>('price_after', (c) => c.after?.price ?? null),
  data<Change>('quantity_before', (c) => c.before?.quantity ?? null),
  data<Change>('quantity_after', (c) => c.after?.quantity ?? null),
  data<Change>('published_before', (c) => c.before?.published ?? null),
  data<Change>('published_after', (c) => c.after?.published ?? null),
]);
