import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify/sync';
import type { CellValue, CsvColumn } from './columns.js';

/**
 * The feeds' CSV (the contract's CSV section), as csv-stringify writes it (`stringifiedRecords`, the
 * reference of the hand-written `csvRecords`): `\n` after each record, a cell quoted when it holds a
 * comma, a quote, `\n` or `\r` (its quotes doubled), null as the empty cell. The rule of ours is the
 * formula guard: a text cell that begins like a spreadsheet formula (`=`, `+`, `-`, `@`, tab, `\r`) is
 * written with a leading `'` before it is quoted.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const FORMAT = { record_delimiter: 'unix', quote_record_delimiter: true } as const;

/** Rows are written in chunks of this many records, about 16 KiB: a few milliseconds of work each. */
const CHUNK_ROWS = 100;

/**
 * A cell as csv-stringify is handed it: a flag as `true`/`false` (csv-stringify's own is 1 or empty),
 * a text cell guarded; numbers and flags never are, so that a negative price stays `-1.5`.
 */
function cell(value: CellValue, text: boolean): string | number | null {
  if (typeof value === 'boolean') return String(value);
  if (!text || value === null) return value;
  const written = String(value);
  return FORMULA_START.test(written) ? `'${written}` : written;
}

/** The CSV records of `rows`, as csv-stringify writes them: the reference of `csvRecords`. */
export function stringifiedRecords<Row>(rows: readonly Row[], columns: readonly CsvColumn<Row>[]): string {
  return stringify(
    rows.map((row) => columns.map((column) => cell(column.value(row), column.text))),
    FORMAT,
  );
}

/**
 * The CSV records of `rows`: the same text as `stringifiedRecords` (a property test holds the two
 * equal, test/export/formats/csv-records.test.ts), written by hand. csv-stringify's per-cell casting
 * and option handling took 1.0 of the 1.6 s of CPU that writing inventory.csv took at 100,000 items.
 */
export function csvRecords<Row>(rows: readonly Row[], columns: readonly CsvColumn<Row>[]): string {
  let text = '';
  for (const row of rows) {
    for (let i = 0; i < columns.length; i += 1) {
      const column = columns[i] as CsvColumn<Row>;
      if (i > 0) text += ',';
      text += csvCell(column.value(row), column.text);
    }
    text += '\n';
  }
  return text;
}

/** Whether a cell is quoted: it holds the delimiter, a quote or either line break. */
const NEEDS_QUOTES = /[,"\n\r]/;

/** One cell as `stringifiedRecords` writes it: guarded as `cell` says, quoted when it must be. */
function csvCell(value: CellValue, text: boolean): string {
  if (value === null) return '';
  let written = typeof value === 'string' ? value : String(value);
  if (text && typeof value !== 'boolean' && FORMULA_START.test(written)) written = `'${written}`;
  if (!NEEDS_QUOTES.test(written)) return written;
  return `"${written.replaceAll('"', '""')}"`;
}

/** The header record of `names`. */
export function csvHeader(names: readonly string[]): string {
  return stringify([names], FORMAT);
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

function* csvChunks<Row>(rows: Iterable<Row>, columns: readonly CsvColumn<Row>[]): Generator<string> {
  yield csvHeader(columns.map((c) => c.name));
  let chunk: Row[] = [];
  for (const row of rows) {
    chunk.push(row);
    if (chunk.length === CHUNK_ROWS) {
      yield csvRecords(chunk, columns);
      chunk = [];
    }
  }
  if (chunk.length > 0) yield csvRecords(chunk, columns);
}
