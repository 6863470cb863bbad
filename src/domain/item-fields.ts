import {
  declaration,
  FIELD_NAMES,
  type FieldDeclaration,
  type FieldKind,
  type FieldName,
  type Item,
} from './item.js';

/**
 * How each file keeps the item's fields (the store's columns, `inventory.csv`'s columns,
 * `snapshot.sqlite`'s `items` and `shops` tables), derived from the item's declaration (`item.ts`).
 */

/** A value as SQLite binds it. */
export type SqlValue = string | number | null;

export interface SnapshotColumn {
  readonly column: string;
  readonly sqlType: 'TEXT' | 'INTEGER' | 'REAL';
  readonly notNull: boolean;
  readonly value: (value: Item[keyof Item]) => SqlValue;
}

export interface ItemField {
  readonly name: FieldName;
  readonly kind: FieldKind;
  /** How the store keeps it (decimals as exact TEXT, booleans as 0/1, lists as JSON text). */
  readonly sqlType: 'TEXT' | 'INTEGER';
  readonly nullable: boolean;
  /** Whether a person reads it as text (lists included): such CSV cells get the spreadsheet formula guard. */
  readonly text: boolean;
  /** Its `inventory.csv` column, when it has one; `text` cells get the spreadsheet formula guard. */
  readonly csv?: { readonly column: string; readonly text: boolean; readonly position: number };
  /** Its `snapshot.sqlite` columns: a decimal is a REAL for queries beside its exact `_text`. */
  readonly snapshot: readonly SnapshotColumn[];
  /**
   * Where `snapshot.sqlite` keeps it: the shop's details, the same on every item of a shop, once per
   * shop in `shops` (keyed by `SHOP_KEY`) rather than on every row of `items`.
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

/** How a stored value is read back, for the kinds `storedValue` changes: its inverse. */
export const STORED_READERS: { readonly [Kind in FieldKind]?: (stored: unknown) => unknown } = {
  boolean: (stored) => stored === 1,
  texts: (stored) => JSON.parse(stored as string),
  integers: (stored) => JSON.parse(stored as string),
};

/** A decimal's REAL in `snapshot.sqlite`: the number JavaScript reads from its exact text. */
export const decimalReal = (value: Item[keyof Item]): SqlValue => (value === null ? null : Number(value));

const TEXT_KINDS: ReadonlySet<FieldKind> = new Set(['id', 'text', 'image', 'texts', 'integers']);

function field(name: FieldName, declared: FieldDeclaration): ItemField {
  const { kind } = declared;
  const nullable = declared.nullable === true;
  const text = TEXT_KINDS.has(kind);
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
    text,
    ...(declared.csv === undefined ? {} : { csv: { column: name, text, position: declared.csv } }),
    snapshot: Object.freeze(snapshot),
    table: declared.perShop ? 'shops' : 'items',
    tracked: declared.identifies !== 'item',
  });
}

/** Every field's representations, in the declaration's order. */
export const ITEM_FIELDS: readonly ItemField[] = Object.freeze(
  FIELD_NAMES.map((name) => field(name, declaration(name))),
);

/** The field identifying `whose`: the item's id, or its shop's. */
function identifying(whose: 'item' | 'shop'): ItemField {
  return ITEM_FIELDS.find((f) => declaration(f.name).identifies === whose) as ItemField;
}

/** The item's identity. */
export const ITEM_KEY: ItemField = identifying('item');

/** The shop's identity, which keys `snapshot.sqlite`'s `shops` table. */
export const SHOP_KEY: ItemField = identifying('shop');

/** Looks a field up by name (every name is in the table). */
export function itemField(name: FieldName): ItemField {
  return ITEM_FIELDS.find((f) => f.name === name) as ItemField;
}
