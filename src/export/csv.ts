import { pipeline } from 'node:stream/promises';
import type { CellValue, CsvColumn } from './columns.js';

/**
 * The feeds' CSV (the contract's CSV section): a header, `\n` after every record, a cell quoted when
 * it holds a comma, a quote, `\n` or `\r` (its quotes doubled), null as the empty cell, and a text
 * cell that begins like a spreadsheet formula (`=`, `+`, `-`, `@`, tab, `\r`) written with a leading
 * `'` before it is quoted. These rules are written twice, side by side below: `csvCell` for values
 * JavaScript holds, and `csvRecords` for cells SQLite hands over as bytes. Both are held to the
 * bytes csv-stringify wrote before them (test/export/csv.test.ts).
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

/** What follows each cell in the bytes `csvRecords` reads: bytes that UTF-8 text never holds. */
export const CELL_END = 0xff;
export const RECORD_END = 0xfe;

/** Per byte: 1 where a cell holding it must be quoted (NEEDS_QUOTES), 2 at a cell's end, 3 at a record's. */
const BYTE_KIND = new Uint8Array(256);
for (const byte of Buffer.from(',"\n\r')) BYTE_KIND[byte] = 1;
BYTE_KIND[CELL_END] = 2;
BYTE_KIND[RECORD_END] = 3;
/** The first bytes of a formula (FORMULA_START). */
const FORMULA_BYTE = new Uint8Array(256);
for (const byte of Buffer.from('=+-@\t\r')) FORMULA_BYTE[byte] = 1;
const QUOTE_BYTE = 0x22;
const GUARD_BYTE = 0x27;

/**
 * The CSV records of `cells`: UTF-8 cells each followed by CELL_END, or by RECORD_END after a record's
 * last, written as `csvCell` writes them; `text[n]` says whether a record's n-th cell is text. Most
 * cells are written as they are: their separators are turned into CSV's in `cells` itself, so that
 * a run of such cells is copied at once.
 */
export function csvRecords(cells: Buffer, text: readonly boolean[]): Buffer {
  const out = new Output(cells.length);
  let column = 0;
  let start = 0;
  // Where the cells not yet written begin: all of them written as they are, separators included.
  let asIs = 0;
  while (start < cells.length) {
    let end = start;
    let quote = 0;
    let kind = BYTE_KIND[cells[end] ?? RECORD_END] as number;
    while (kind < 2) {
      quote |= kind;
      end += 1;
      kind = BYTE_KIND[cells[end] ?? RECORD_END] as number;
    }
    cells[end] = kind === 2 ? 0x2c : 0x0a;
    const guard = text[column] === true && end > start && FORMULA_BYTE[cells[start] as number] === 1;
    if (quote === 1 || guard) {
      out.copy(cells, asIs, start);
      out.cell(cells, start, end, quote === 1, guard);
      asIs = end;
    }
    column = kind === 2 ? column + 1 : 0;
    start = end + 1;
  }
  out.copy(cells, asIs, cells.length);
  return out.bytes();
}

/** A growing buffer of CSV bytes. */
class Output {
  private buffer: Buffer;
  private written = 0;

  constructor(expected: number) {
    this.buffer = Buffer.allocUnsafe(expected + (expected >> 2) + 64);
  }

  /** `from`'s bytes `start` to `end`, as they are. */
  copy(from: Buffer, start: number, end: number): void {
    this.reserve(end - start);
    this.written += from.copy(this.buffer, this.written, start, end);
  }

  /** The cell `from[start..end)`, quoted (its quotes doubled) and guarded as asked. */
  cell(from: Buffer, start: number, end: number, quote: boolean, guard: boolean): void {
    // At most every byte doubled, two quotes and the guard.
    this.reserve(2 * (end - start) + 3);
    const out = this.buffer;
    let written = this.written;
    if (quote) out[written++] = QUOTE_BYTE;
    if (guard) out[written++] = GUARD_BYTE;
    if (quote) {
      for (let at = start; at < end; at += 1) {
        const byte = from[at] as number;
        out[written++] = byte;
        if (byte === QUOTE_BYTE) out[written++] = QUOTE_BYTE;
      }
      out[written++] = QUOTE_BYTE;
    } else {
      written += from.copy(out, written, start, end);
    }
    this.written = written;
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.written);
  }

  private reserve(bytes: number): void {
    if (this.written + bytes <= this.buffer.length) return;
    const larger = Buffer.allocUnsafe(2 * this.buffer.length + bytes);
    this.buffer.copy(larger, 0, 0, this.written);
    this.buffer = larger;
  }
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

function* csvChunks<Row>(rows: Iterable<Row>, columns: readonly CsvColumn<Row>[]): Generator<string> {
  let chunk = csvHeader(columns.map((c) => c.name));
  for (const row of rows) {
    chunk += `${columns.map((column) => csvCell(column.value(row), column.text)).join(',')}\n`;
    if (chunk.length >= CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}
