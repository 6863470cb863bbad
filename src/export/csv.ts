import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { CellValue, CsvColumn } from './columns.js';

/** Cells beginning with these are run as formulas by spreadsheet programs. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * Streams `rows` as RFC 4180 CSV (header first, `\n` record ends, quoted where needed) into `out`,
 * waiting for `out` to drain so that memory stays flat however many rows there are. `out` is left
 * open: the caller owns it (it may be stdout, a gzip stream or a file).
 */
export async function writeCsv<Row>(
  rows: Iterable<Row>,
  columns: readonly CsvColumn<Row>[],
  out: NodeJS.WritableStream,
): Promise<void> {
  const stringifier = stringify({
    header: true,
    columns: columns.map((c) => c.name),
    record_delimiter: 'unix',
    quote_record_delimiter: true,
  });
  const piped = pipeline(stringifier, out, { end: false });
  try {
    for (const row of rows) {
      if (!stringifier.write(columns.map((column) => cell(column, row)))) {
        // A destination that fails never drains: the pipeline's rejection ends the wait instead.
        await Promise.race([once(stringifier, 'drain'), piped]);
      }
    }
    stringifier.end();
  } catch (error) {
    stringifier.destroy(error as Error);
    await piped.catch(() => undefined);
    throw error;
  }
  await piped;
}

function cell<Row>(column: CsvColumn<Row>, row: Row): string {
  const value: CellValue = column.value(row);
  if (value === null) return '';
  const written = typeof value === 'string' ? value : String(value);
  return column.text && FORMULA_START.test(written) ? `'${written}` : written;
}
