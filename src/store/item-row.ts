import type { Decimal } from '../domain/decimal.js';
import { type Item, TRACKED_FIELDS } from '../domain/item.js';
import { type SqlValue, storedValue as sqlValue } from '../domain/item-fields.js';
import { valuesHash } from './values-hash.js';

/** An item as SQLite holds it: booleans as 0/1, arrays as JSON text. */
export interface ItemRow {
  id: string;
  hash: number;
  title: string;
  price: string;
  original_price: string | null;
  currency: string | null;
  quantity: number;
  published: 0 | 1;
  created_at: string;
  url: string;
  web_url: string | null;
  photos: string;
  photos_id: string;
  description: string | null;
  raw_description: string | null;
  fbcomments: string | null;
  shop_id: string;
  shop_name: string;
  shop_url: string;
  shop_image: string | null;
  shop_items_url: string;
  raw: string;
}

/** The item columns shared by `item_versions` and `staged_items`, in a fixed order. */
export const ITEM_COLUMNS: readonly (keyof ItemRow)[] = ['id', 'hash', ...TRACKED_FIELDS, 'raw'];

/**
 * Identity of an item's tracked values: equal values give equal hashes whatever the API's
 * representation was, because the values are canonical before they get here. It is `valuesHash` of
 * them (53 bits: a safe integer, 8 bytes in SQLite), compared only with the versions of the same id,
 * so a collision (2^-53 a comparison) stays negligible. Stores of schema version 6 and before kept
 * the first 52 bits of the SHA-1 of the values' JSON: migration 7 computes every hash again.
 */
export function itemHash(item: Item): number {
  return valuesHash(TRACKED_FIELDS.map((field) => item[field]));
}

/** What SQLite binds for one item column; an item field as SQLite keeps it. */
export { type SqlValue, storedValue as sqlValue } from '../domain/item-fields.js';

/** The item's values in `ITEM_COLUMNS` order, for binding by position. */
export function itemValues(item: Item, versionHash: number): SqlValue[] {
  return ITEM_COLUMNS.map((column) => (column === 'hash' ? versionHash : sqlValue(item[column])));
}

/** Where each column sits in a row selected as `ITEM_COLUMNS` in raw (array) mode. */
const AT = Object.fromEntries(ITEM_COLUMNS.map((column, index) => [column, index])) as Record<
  keyof ItemRow,
  number
>;

/**
 * The item of a row selected as `ITEM_COLUMNS` (`prefixedColumns`) with `.raw()`: arrays are read
 * about twice as fast as row objects, which counts when a whole snapshot streams through.
 */
export function rowToItem(row: readonly unknown[]): Item {
  return {
    id: row[AT.id] as string,
    title: row[AT.title] as string,
    price: row[AT.price] as Decimal,
    original_price: row[AT.original_price] as Decimal | null,
    currency: row[AT.currency] as string | null,
    quantity: row[AT.quantity] as number,
    published: row[AT.published] === 1,
    created_at: row[AT.created_at] as string,
    url: row[AT.url] as string,
    web_url: row[AT.web_url] as string | null,
    photos: JSON.parse(row[AT.photos] as string) as string[],
    photos_id: JSON.parse(row[AT.photos_id] as string) as number[],
    description: row[AT.description] as string | null,
    raw_description: row[AT.raw_description] as string | null,
    fbcomments: row[AT.fbcomments] as string | null,
    shop_id: row[AT.shop_id] as string,
    shop_name: row[AT.shop_name] as string,
    shop_url: row[AT.shop_url] as string,
    shop_image: row[AT.shop_image] as string | null,
    shop_items_url: row[AT.shop_items_url] as string,
    raw: row[AT.raw] as string,
  };
}

/** `table.column, ...` in `ITEM_COLUMNS` order, for selecting two item rows side by side. */
export function prefixedColumns(table: string): string {
  return ITEM_COLUMNS.map((c) => `${table}.${c}`).join(', ');
}

/** The item whose columns start at `offset` of a raw row, or null when a LEFT JOIN found none. */
export function itemAt(row: readonly unknown[], offset: number): Item | null {
  if (row[offset + AT.id] === null) return null;
  return rowToItem(row.slice(offset, offset + ITEM_COLUMNS.length));
}
