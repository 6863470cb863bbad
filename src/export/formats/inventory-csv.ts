import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { ITEM_KEY, type ItemField, type SqlValue } from '../../domain/item-fields.js';
import { VALID_AT } from '../../store/snapshot.js';
import { INVENTORY_COLUMNS, INVENTORY_FIELDS } from './columns.js';
import { csvHeader, csvRecords, writeChunks } from './csv.js';
import { keyed, SLICE } from './slices.js';

/**
 * `inventory.csv` from a snapshot's items: SQLite selects their stored values and csv.ts writes
 * them, a slice at a time with a turn of the event loop between slices.
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
): AsyncGenerator<string> {
  yield csvHeader(INVENTORY_COLUMNS.map((column) => column.name));
  const slice = keyed(db, (bounded) => sliceSql(source, bounded));
  let after: string | null = null;
  for (;;) {
    const rows = slice(after).raw().all({ run, after }) as SqlValue[][];
    const last = rows.at(-1);
    if (last === undefined) return;
    yield csvRecords(rows, INVENTORY_COLUMNS);
    after = last[ID_AT] as string;
    await nextTurn();
  }
}

/** Where an item's id is in a row of `sliceSql`. */
export const ID_AT = INVENTORY_FIELDS.findIndex((field) => field.name === 'id');

/** The stored values of the next SLICE items after id `@after`, in `INVENTORY_FIELDS` order. */
export function sliceSql(source: ItemSource, bounded: boolean): string {
  const id = source.column(ITEM_KEY);
  return `SELECT ${INVENTORY_FIELDS.map((field) => source.column(field)).join(', ')}
      FROM ${source.from}
     WHERE ${source.where}${bounded ? ` AND ${id} > @after` : ''}
     ORDER BY ${id} LIMIT ${SLICE}`;
}
