import { pipeline } from 'node:stream/promises';
import type { CellValue, CsvColumn } from './columns.js';

/**
 * The feeds' CSV (the contract's CSV section): a header, `\n` after every record, a cell quoted when
 * it holds a comma, a quote, `\n` or `\r` (its quotes doubled), null as the empty cell, and a text
 * cell that begins like a spreadsheet formula (`=`, `+`, `-`, `@`, tab, `\r`) written with a leading
 * `'` before it is quoted. `csvCell` is the only writer of these rules; a property test holds it to
 * csv-stringify's bytes (test/export/csv.test.ts).
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[,"\n\r]/;
const QUOTE = /"/g;

/** Rows are gathered into chunks of about this many characters: a few milliseconds of work each. */
const CHUNK_CHARS = 16 * 1024;

/** One cell as written; `text` cells get the formula guard, numbers and flags never do. */
export function csvCell(value: CellValue, text: boolean): string {
  if (value === null) return '';
  let written = typeof value === 'string' ? value : String(value);
  if (text && FORMULA_START.test(written)) written = `'${written}`;
  return NEEDS_QUOTES.test(written) ? `"${written.replace(QUOTE, '""')}"` : written;
}

/** The header record of `names`. */
export function csvHeader(names: readonly string[]): string {
  return `${names.map((name) => csvCell(name, false)).join(',')}\n`;
}

/**
 * Streams `rows` as CSV into `out`, waiting for `out` to drain so that memory stays flat however many
 * rows there are. `out` is left open: the caller owns it (it may be stdout, a gzip stream or a file).
 */
export function writeCsv<Row>(
  rows: Iterable<Row>,
  columns: readonly CsvColumn<Row>[],
  out: NodeJS.WritableStream,
): Promise<void> {
  return writeChunks(csvChunks(rows, columns), out);
}

/** Writes every chunk of `chunks` into `out` (left open); a failing destination ends the wait with its error. */
export function writeChunks(
  chunks: Iterable<string | Buffer> | AsyncIterable<string | Buffer>,
  out: NodeJS.WritableStream,
): Promise<void> {
  return pipeline(chunks, out, { end: false });
}

/** The CSV record of `row`. */
export function csvRecord<Row>(row: Row, columns: readonly CsvColumn<Row>[]): string {
  return `${columns.map((column) => csvCell(column.value(row), column.text)).join(',')}\n`;
}

function* csvChunks<Row>(rows: Iterable<Row>, columns: readonly CsvColumn<Row>[]): Generator<string> {
  let chunk = csvHeader(columns.map((c) => c.name));
  for (const row of rows) {
    chunk += csvRecord(row, columns);
    if (chunk.length >= CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}
