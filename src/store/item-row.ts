import { type FieldName, type Item, TRACKED_FIELDS } from '../domain/item.js';
import {
  ITEM_FIELDS,
  type SqlValue,
  STORED_READERS,
  storedValue as sqlValue,
} from '../domain/item-fields.js';
import { valuesHash } from './values-hash.js';

/** The columns of an item's row: its fields, the hash of its tracked values, and its raw JSON. */
type ItemColumn = FieldName | 'hash' | 'raw';

/** The item columns shared by `item_versions` and `staged_items`, in a fixed order. */
export const ITEM_COLUMNS: readonly ItemColumn[] = ['id', 'hash', ...TRACKED_FIELDS, 'raw'];

/**
 * Identity of an item's tracked values: equal values give equal hashes whatever the API's
 * representation was, because the values are canonical before they get here. It is `valuesHash` of
 * them (53 bits: a safe integer, 8 bytes in SQLite), compared only with the versions of the same id,
 * so a collision (2^-53 a comparison) stays negligible. Stores of schema version 7 and before kept
 * the first 52 bits of the SHA-1 of the values' JSON: migration 8 computes every hash again.
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
  ItemColumn,
  number
>;

/** Each field's column and how its stored value is read back. */
const READ_ITEM = ITEM_FIELDS.map((field) => ({
  name: field.name,
  at: AT[field.name],
  read: STORED_READERS[field.kind],
}));

/**
 * The item of a row selected as `ITEM_COLUMNS` (`prefixedColumns`) with `.raw()`: arrays are read
 * about twice as fast as row objects, which counts when a whole snapshot streams through.
 */
export function rowToItem(row: readonly unknown[]): Item {
  const item: Record<string, unknown> = {};
  for (const { name, at, read } of READ_ITEM) item[name] = read === undefined ? row[at] : read(row[at]);
  item.raw = row[AT.raw];
  return item as Item;
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
