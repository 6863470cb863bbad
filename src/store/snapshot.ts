import type { Item } from '../domain/item.js';
import { ITEM_COLUMNS, rowToItem } from './item-row.js';
import type { Store } from './open.js';

/** The version of each item that was current when `run` completed. `run` must be a complete run. */
export const VALID_AT = (table: string, param: string) =>
  `${table}.valid_from_run <= ${param} AND (${table}.valid_to_run IS NULL OR ${table}.valid_to_run > ${param})`;

/** The items of a complete run, by id, streamed from SQLite: memory stays flat with the shop's size. */
export function* snapshotItems(store: Store, run: number): IterableIterator<Item> {
  const rows = store.db
    .prepare(
      `SELECT ${ITEM_COLUMNS.join(', ')} FROM item_versions v WHERE ${VALID_AT('v', '?')} ORDER BY v.id`,
    )
    .raw()
    .iterate(run, run) as IterableIterator<unknown[]>;
  for (const row of rows) yield rowToItem(row);
}
