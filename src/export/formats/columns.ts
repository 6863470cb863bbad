import type { Change } from '../../domain/change.js';
import { SIDE_FIELDS, type SideField } from '../../domain/item.js';
import {
  ITEM_FIELDS,
  type ItemField,
  itemField,
  SHOP_KEY,
  type SqlValue,
  STORED_READERS,
} from '../../domain/item-fields.js';

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

/** One column of a `snapshot.sqlite` table and how a row fills it. */
export interface TableColumn<Row> {
  readonly column: string;
  readonly sqlType: 'TEXT' | 'INTEGER' | 'REAL';
  readonly notNull: boolean;
  readonly value: (row: Row) => SqlValue;
}

/** An item field that has an `inventory.csv` column, with that column. */
export type InventoryField = ItemField & { readonly csv: NonNullable<ItemField['csv']> };

/** `inventory.csv`: the item fields that have a CSV column, in the contract's order. */
export const INVENTORY_FIELDS: readonly InventoryField[] = Object.freeze(
  ITEM_FIELDS.filter((field): field is InventoryField => field.csv !== undefined).sort(
    (a, b) => a.csv.position - b.csv.position,
  ),
);

/**
 * `inventory.csv`'s columns over an item's stored values (`storedValue`), selected in
 * `INVENTORY_FIELDS` order: a list is written as its elements separated by single spaces.
 */
export const INVENTORY_COLUMNS: readonly CsvColumn<readonly SqlValue[]>[] = Object.freeze(
  INVENTORY_FIELDS.map((field, at) => ({
    name: field.csv.column,
    text: field.csv.text,
    value: (row: readonly SqlValue[]) => cellValue(field, row[at] ?? null),
  })),
);

function cellValue(field: InventoryField, stored: SqlValue): CellValue {
  if (stored === null) return null;
  const value = STORED_READERS[field.kind]?.(stored) ?? stored;
  return Array.isArray(value) ? value.join(' ') : (value as CellValue);
}

interface ChangeColumn {
  readonly csv: CsvColumn<Change>;
  readonly snapshot: readonly TableColumn<Change>[];
}

const describing = (name: string, value: (change: Change) => string): ChangeColumn => ({
  csv: { name, text: true, value },
  snapshot: [{ column: name, sqlType: 'TEXT', notNull: true, value }],
});

/**
 * Before/after cells are filled for every change that has that side (an update shows both values
 * even when only other fields changed); empty otherwise. In `snapshot.sqlite` they take the item
 * field's columns (`price_before` REAL beside `price_before_text`).
 */
function side(name: SideField, which: 'before' | 'after'): ChangeColumn {
  const field = itemField(name);
  const item = (change: Change) => change[which];
  const column = `${name}_${which}`;
  return {
    csv: { name: column, text: false, value: (change) => item(change)?.[name] ?? null },
    snapshot: field.snapshot.map((s) => ({
      column: s.column.replace(name, column),
      sqlType: s.sqlType,
      notNull: false,
      value: (change: Change) => {
        const found = item(change);
        return found ? s.value(found[name]) : null;
      },
    })),
  };
}

/** The change columns, once: `changes.csv` and `snapshot.sqlite`'s `changes` table derive from it. */
const CHANGE_COLUMNS: readonly ChangeColumn[] = [
  describing('change', (c) => c.change),
  describing('id', (c) => c.id),
  describing('title', (c) => c.title),
  describing('changed_fields', (c) => c.fields.join('|')),
  ...SIDE_FIELDS.flatMap((name) => [side(name, 'before'), side(name, 'after')]),
];

/** `changes.csv`, in the contract's order. */
export const CHANGES_COLUMNS: readonly CsvColumn<Change>[] = Object.freeze(CHANGE_COLUMNS.map((c) => c.csv));

/** `snapshot.sqlite`'s `changes` table. */
export const CHANGE_TABLE_COLUMNS: readonly TableColumn<Change>[] = Object.freeze(
  CHANGE_COLUMNS.flatMap((c) => c.snapshot),
);

/**
 * One column of `snapshot.sqlite`'s `items` or `shops` table and the item field that fills it. SQLite
 * copies these from the store itself (snapshot-sqlite.ts), so the field's `snapshot` entry says what
 * each column holds rather than a function computing it.
 */
export interface ItemTableColumn {
  readonly column: string;
  readonly sqlType: 'TEXT' | 'INTEGER' | 'REAL';
  readonly notNull: boolean;
  readonly field: ItemField;
}

const tableColumns = (fields: readonly ItemField[]): readonly ItemTableColumn[] =>
  Object.freeze(
    fields.flatMap((field) =>
      field.snapshot.map((s) => ({ column: s.column, sqlType: s.sqlType, notNull: s.notNull, field })),
    ),
  );

/** `snapshot.sqlite`'s `items` table: the item fields that are not the shop's (no raw JSON: consumers get values). */
export const ITEM_TABLE_COLUMNS = tableColumns(ITEM_FIELDS.filter((field) => field.table === 'items'));

/** `snapshot.sqlite`'s `shops` table: the shop's id (`SHOP_KEY`) and details, once per shop. */
export const SHOP_TABLE_COLUMNS = tableColumns([
  SHOP_KEY,
  ...ITEM_FIELDS.filter((field) => field.table === 'shops'),
]);
