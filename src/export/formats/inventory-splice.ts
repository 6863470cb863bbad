import { createReadStream } from 'node:fs';
import type Database from 'better-sqlite3';
import type { SqlValue } from '../../domain/item-fields.js';
import { INVENTORY_COLUMNS } from './columns.js';
import { csvHeader, csvRecords, writeChunks } from './csv.js';
import { RecordEnds } from './csv-records.js';
import { ID_AT, type ItemSource, sliceSql } from './inventory-csv.js';
import { keyedSlices, SLICE } from './slices.js';

/**
 * `inventory.csv` of a run spliced from the published one of the run its changes count from: the
 * records of the items that did not change are copied byte for byte, the added and updated items'
 * records are written by csv.ts as a full write writes them, and the removed items' are left out.
 * Records are in id order, so walking the published file beside that file's snapshot's ids (in the
 * same order) and the changes puts each record where a full write puts it. The reference is
 * `writeInventoryCsv`; a property test holds the two to the same bytes
 * (test/export/formats/inventory-splice.test.ts). Bench: with the snapshot updated in place, a 1 %
 * resync of 100,000 items takes 6.98 s of CPU, not 9.38 s with both written whole (medians,
 * docs/benchmark.md).
 */

/** The published `inventory.csv` is not what its snapshot says it holds: it cannot be spliced. */
export class UnlikeSnapshot extends Error {}

/** The published feeds a run's `inventory.csv` is spliced from: written together, of the same run. */
export interface PublishedInventory {
  readonly csv: string;
  readonly snapshot: string;
}

/**
 * Streams into `out` (left open) the `inventory.csv` of `items` on `db`, a snapshot file updated from
 * `published.snapshot` with the changes in its `changes` table. Throws UnlikeSnapshot, having written
 * part of it, when `published.csv` does not hold exactly a record of each of that snapshot's items
 * under this version's header, or a record it leaves out is not the one this version writes.
 */
export async function spliceInventoryCsv(
  db: Database.Database,
  items: ItemSource,
  published: PublishedInventory,
  out: NodeJS.WritableStream,
): Promise<void> {
  db.prepare('ATTACH DATABASE ? AS published').run(published.snapshot);
  try {
    await writeChunks(splicedChunks(new Merge(db, items), published.csv), out);
  } finally {
    db.exec('DETACH DATABASE published');
  }
}

/**
 * What the published file's next record is replaced with: `before`, the records written ahead of
 * it, then the record itself unless `expected` gives the bytes it must have to be left out (none
 * after the last one: nothing may follow).
 */
interface Step {
  readonly before: readonly Buffer[];
  readonly expected?: Buffer;
}

const HEADER = Buffer.from(csvHeader(INVENTORY_COLUMNS.map((column) => column.name)));
const NOTHING = Buffer.alloc(0);

/**
 * The published file's records, from its header on, each copied or left out as `merge` says, with
 * the records it adds. Copied records go out as slices of the chunks read: no record is decoded.
 */
async function* splicedChunks(merge: Merge, file: string): AsyncGenerator<Buffer> {
  yield HEADER;
  const ends = new RecordEnds();
  // The header is left out and checked like a removed record: the new one is written above.
  let step: Step = { before: [], expected: HEADER };
  let dropped: Buffer[] = [];
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let from = 0;
    for (const end of ends.in(chunk)) {
      if (step.expected !== undefined) {
        dropped.push(chunk.subarray(from, end));
        check(dropped, step.expected);
        dropped = [];
        from = end;
      }
      const next = merge.next();
      if (step.expected === undefined && (next.expected !== undefined || next.before.length > 0)) {
        yield chunk.subarray(from, end);
        from = end;
      }
      // Most records have none, and `yield*` of even an empty array costs an async generator a turn.
      if (next.before.length > 0) yield* next.before;
      step = next;
    }
    if (step.expected !== undefined) dropped.push(chunk.subarray(from));
    else if (from < chunk.length) yield chunk.subarray(from);
  }
  if (step.expected !== NOTHING || dropped.some((piece) => piece.length > 0)) {
    throw new UnlikeSnapshot('its records end before its snapshot’s items do');
  }
  yield* merge.rest();
}

function check(record: readonly Buffer[], expected: Buffer): void {
  const bytes = record.length === 1 ? (record[0] as Buffer) : Buffer.concat(record);
  if (!bytes.equals(expected)) {
    throw new UnlikeSnapshot(
      expected === NOTHING
        ? 'it holds more records than its snapshot has items'
        : 'a record is not as written',
    );
  }
}

/**
 * The published snapshot's ids and the changes, both in id order, merged: each change is tied to
 * the published id it comes at (`at`: its own, or for an added item the next one; null after the
 * last), so that ids are only ever compared for equality, never ordered outside SQLite.
 */
class Merge {
  private readonly ids: Cursor<unknown[]>;
  private readonly changes: Cursor<unknown[]>;
  private readonly written: Cursor<Buffer>;
  private readonly leftOut: Cursor<Buffer>;
  private change: unknown[] | undefined;

  constructor(db: Database.Database, items: ItemSource) {
    this.ids = new Cursor(
      keyedSlices(
        db,
        (bounded) =>
          `SELECT id FROM published.items${bounded ? ' WHERE id > @after' : ''} ORDER BY id LIMIT ${ID_SLICE}`,
      ),
    );
    this.changes = new Cursor(
      keyedSlices(
        db,
        (bounded) =>
          `SELECT c.id, c.change, (SELECT min(o.id) FROM published.items o WHERE o.id >= c.id)
             FROM main.changes c${bounded ? ' WHERE c.id > @after' : ''} ORDER BY c.id LIMIT ${SLICE}`,
      ),
    );
    const changed = (from: string, which: string): ItemSource => ({
      from,
      where: `id IN (SELECT id FROM main.changes WHERE change ${which})`,
      column: items.column,
    });
    const records = (source: ItemSource) => {
      const rows = keyedSlices(db, (bounded) => sliceSql(source, bounded), ID_AT);
      return new Cursor(() => rendered(rows() as SqlValue[][]));
    };
    this.written = records(changed('main.items', "<> 'removed'"));
    this.leftOut = records(changed('published.items', "<> 'added'"));
    this.change = this.changes.next();
  }

  /** The step at the published file's next record; past its snapshot's last id, nothing may follow. */
  next(): Step {
    const id = this.ids.next();
    if (id === undefined) return { before: [], expected: NOTHING };
    const before: Buffer[] = [];
    let expected: Buffer | undefined;
    while (this.change !== undefined && this.change[2] === id[0]) {
      if (this.change[1] !== 'removed') before.push(this.written.next() as Buffer);
      if (this.change[1] !== 'added') expected = this.leftOut.next();
      this.change = this.changes.next();
    }
    return expected === undefined ? { before } : { before, expected };
  }

  /** The records of the items added after the published snapshot's last id (their `at` is null). */
  rest(): Buffer[] {
    const after: Buffer[] = [];
    for (; this.change !== undefined; this.change = this.changes.next()) {
      after.push(this.written.next() as Buffer);
    }
    return after;
  }
}

/** Ids are read more at a time than whole rows: a slice of them is a fraction of a millisecond. */
const ID_SLICE = 10 * SLICE;

/** The records of `rows` as csv.ts writes them, each on its own. */
function rendered(rows: SqlValue[][]): Buffer[] {
  if (rows.length === 0) return [];
  const bytes = Buffer.from(csvRecords(rows, INVENTORY_COLUMNS));
  const ends = new RecordEnds().in(bytes);
  return ends.map((end, n) => bytes.subarray(ends[n - 1] ?? 0, end));
}

/** Hands out the items of consecutive slices one by one: `slice()` gives the next, empty after the last. */
class Cursor<T> {
  private items: readonly T[] = [];
  private at = 0;

  constructor(private readonly slice: () => readonly T[]) {}

  next(): T | undefined {
    if (this.at === this.items.length) {
      this.items = this.slice();
      this.at = 0;
    }
    return this.items[this.at++];
  }
}
