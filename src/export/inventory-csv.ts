import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { ITEM_KEY, type ItemField } from '../domain/item-fields.js';
import { VALID_AT } from '../store/snapshot.js';
import { INVENTORY_FIELDS, type InventoryField } from './columns.js';
import { CELL_END, csvHeader, csvRecords, RECORD_END, writeChunks } from './csv.js';
import { keyed, SLICE } from './slices.js';
import { integerTextSql, registerJsConversions } from './sql-values.js';

/**
 * `inventory.csv` from SQLite's bytes: each slice of items comes as one run of their cells' UTF-8
 * (computed in SQL, a list already joined) with separators, which `csvRecords` quotes and guards as
 * `csvCell` would, so that no item becomes a JavaScript object or string on its way to the file.
 */

/** Where a connection finds one snapshot's items. */
export interface ItemSource {
  /** The FROM clause, e.g. `item_versions v`. */
  readonly from: string;
  /** Which of its rows are the snapshot's; it may use the parameter `@run`. */
  readonly where: string;
  /** How a field's value, as the store represents it, is selected. */
  readonly column: (field: ItemField) => string;
}

/** The items of the complete run `@run` in the store, attached to the connection as `schema`. */
export function storeItems(schema = 'main'): ItemSource {
  return {
    from: `${schema}.item_versions v`,
    where: VALID_AT('v', '@run'),
    column: (field) => `v.${field.name}`,
  };
}

/** Streams the items of `source` (of run `run`), by id, as `inventory.csv` into `out`, left open. */
export function writeInventoryCsv(
  db: Database.Database,
  source: ItemSource,
  run: number,
  out: NodeJS.WritableStream,
): Promise<void> {
  return writeChunks(inventoryChunks(db, source, run), out);
}

async function* inventoryChunks(
  db: Database.Database,
  source: ItemSource,
  run: number,
): AsyncGenerator<string | Buffer> {
  yield csvHeader(INVENTORY_FIELDS.map((field) => field.csv.column));
  registerJsConversions(db);
  const slice = keyed(db, (bounded) => sliceSql(source, bounded));
  let after: string | null = null;
  for (;;) {
    const [cells, last] = slice(after).raw().get({ run, after }) as [Buffer | null, string | null];
    if (cells === null || last === null) return;
    yield csvRecords(cells, TEXT_CELLS);
    after = last;
    await nextTurn();
  }
}

const TEXT_CELLS = INVENTORY_FIELDS.map((field) => field.csv.text);

/** The cells of the next SLICE items after id `@after`, as `csvRecords` reads them, and the last id. */
function sliceSql(source: ItemSource, bounded: boolean): string {
  const id = source.column(ITEM_KEY);
  const cells = INVENTORY_FIELDS.map((field) => `ifnull(${cellSql(field, source.column(field))}, '')`);
  const record = `${cells.join(` || x'${hex(CELL_END)}' || `)} || x'${hex(RECORD_END)}'`;
  return `SELECT CAST(group_concat(record, '' ORDER BY id) AS BLOB), max(id) FROM (
      SELECT ${record} AS record, ${id} AS id
        FROM ${source.from}
       WHERE ${source.where}${bounded ? ` AND ${id} > @after` : ''}
       ORDER BY ${id} LIMIT ${SLICE})`;
}

const hex = (byte: number) => byte.toString(16).padStart(2, '0');

/**
 * The text of `field`'s cell, from its stored value `stored`, as JavaScript wrote the value. The
 * store's text is UTF-8 written from JavaScript strings: it never holds the separators' bytes.
 */
function cellSql(field: InventoryField, stored: string): string {
  switch (field.kind) {
    case 'id':
    case 'text':
    case 'image':
    case 'decimal':
      return stored;
    case 'texts':
    case 'integers':
      return joinedSql(stored);
    case 'integer':
      return integerTextSql(stored);
    case 'boolean':
      return `CASE WHEN ${stored} = 1 THEN 'true' ELSE 'false' END`;
  }
}

/**
 * A list of strings as its elements separated by single spaces, from its JSON text. The store writes
 * it with JSON.stringify, which escapes every `"` and control character with a backslash: text
 * without a backslash splits exactly at `","`, and SQLite's JSON reader takes the rest.
 */
function joinedSql(json: string): string {
  return `CASE WHEN ${json} = '[]' THEN ''
    WHEN instr(${json}, '\\') = 0 THEN replace(substr(${json}, 3, length(${json}) - 4), '","', ' ')
    ELSE (SELECT group_concat(value, ' ' ORDER BY key) FROM json_each(${json})) END`;
}
