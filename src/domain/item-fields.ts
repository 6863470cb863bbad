import type { Item } from './item.js';

/**
 * The item's fields, once: every list of them (the store's columns, the diff's tracked fields,
 * `inventory.csv`'s columns, `snapshot.sqlite`'s `items` table) derives from this table. Entries are
 * in the order diffs report changed fields; the CSV's order (the contract's) is `csv.position`.
 */

/** What a field holds, which fixes how each file writes it. */
export type FieldKind = 'text' | 'decimal' | 'integer' | 'boolean' | 'list';

/** A value as SQLite binds it. */
export type SqlValue = string | number | null;

export interface SnapshotColumn {
  readonly column: string;
  readonly sqlType: 'TEXT' | 'INTEGER' | 'REAL';
  readonly notNull: boolean;
  readonly value: (value: Item[keyof Item]) => SqlValue;
}

export interface ItemField {
  readonly name: Exclude<keyof Item, 'raw'>;
  readonly kind: FieldKind;
  /** How the store keeps it (decimals as exact TEXT, booleans as 0/1, lists as JSON text). */
  readonly sqlType: 'TEXT' | 'INTEGER';
  readonly nullable: boolean;
  /** Its `inventory.csv` column, when it has one; `text` cells get the spreadsheet formula guard. */
  readonly csv?: { readonly column: string; readonly text: boolean; readonly position: number };
  /** Its `snapshot.sqlite` columns: a decimal is a REAL for queries beside its exact `_text`. */
  readonly snapshot: readonly SnapshotColumn[];
  /**
   * Where `snapshot.sqlite` keeps it: the shop's details, the same on every item of a shop, once per
   * shop in `shops` (keyed by `shop_id`) rather than on every row of `items`.
   */
  readonly table: 'items' | 'shops';
  /** Whether a change of it makes a new version (every field but the identity). */
  readonly tracked: boolean;
}

/** The store's representation, shared by the store and `snapshot.sqlite`. */
export function storedValue(value: Item[keyof Item]): SqlValue {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (Array.isArray(value)) return JSON.stringify(value);
  return value as SqlValue;
}

/** A decimal's REAL in `snapshot.sqlite`: the number JavaScript reads from its exact text. */
export const decimalReal = (value: Item[keyof Item]): SqlValue => (value === null ? null : Number(value));

function field(
  name: ItemField['name'],
  kind: FieldKind,
  options: { nullable?: boolean; csv?: number; tracked?: boolean; perShop?: boolean } = {},
): ItemField {
  const nullable = options.nullable ?? false;
  const sqlType = kind === 'integer' || kind === 'boolean' ? 'INTEGER' : 'TEXT';
  const stored: SnapshotColumn = { column: name, sqlType, notNull: !nullable, value: storedValue };
  const snapshot: SnapshotColumn[] =
    kind === 'decimal'
      ? [
          { column: name, sqlType: 'REAL', notNull: !nullable, value: decimalReal },
          { ...stored, column: `${name}_text` },
        ]
      : [stored];
  return Object.freeze({
    name,
    kind,
    sqlType,
    nullable,
    ...(options.csv === undefined
      ? {}
      : { csv: { column: name, text: kind === 'text' || kind === 'list', position: options.csv } }),
    snapshot: Object.freeze(snapshot),
    table: options.perShop ? 'shops' : 'items',
    tracked: options.tracked ?? true,
  });
}

export const ITEM_FIELDS: readonly ItemField[] = Object.freeze([
  field('id', 'text', { csv: 0, tracked: false }),
  field('price', 'decimal', { csv: 2 }),
  field('original_price', 'decimal', { nullable: true, csv: 3 }),
  field('quantity', 'integer', { csv: 5 }),
  field('published', 'boolean', { csv: 6 }),
  field('title', 'text', { csv: 1 }),
  field('currency', 'text', { nullable: true, csv: 4 }),
  field('created_at', 'text', { csv: 7 }),
  field('url', 'text', { csv: 8 }),
  field('web_url', 'text', { nullable: true, csv: 9 }),
  field('photos', 'list', { csv: 10 }),
  field('photos_id', 'list'),
  field('description', 'text', { nullable: true, csv: 11 }),
  field('raw_description', 'text', { nullable: true }),
  field('fbcomments', 'text', { nullable: true }),
  field('shop_id', 'text', { csv: 12 }),
  field('shop_name', 'text', { perShop: true }),
  field('shop_url', 'text', { perShop: true }),
  field('shop_image', 'text', { nullable: true, perShop: true }),
  field('shop_items_url', 'text', { perShop: true }),
]);

/** Looks a field up by name (every name is in the table). */
export function itemField(name: ItemField['name']): ItemField {
  return ITEM_FIELDS.find((f) => f.name === name) as ItemField;
}
