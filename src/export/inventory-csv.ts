import type { Item } from '../domain/item.js';
import { INVENTORY_COLUMNS } from './columns.js';
import { writeCsv } from './csv.js';

/** Streams a snapshot's items as `inventory.csv` into `out` (left open for the caller). */
export function writeInventoryCsv(items: Iterable<Item>, out: NodeJS.WritableStream): Promise<void> {
  return writeCsv(items, INVENTORY_COLUMNS, out);
}
