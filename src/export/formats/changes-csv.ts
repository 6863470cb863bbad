import type { Change } from '../../domain/change.js';
import { CHANGES_COLUMNS } from './columns.js';
import { writeCsv } from './csv.js';

/** Streams changes as `changes.csv` into `out` (left open for the caller); also `diff --format csv`. */
export function writeChangesCsv(changes: Iterable<Change>, out: NodeJS.WritableStream): Promise<void> {
  return writeCsv(changes, CHANGES_COLUMNS, out);
}
