import { createReadStream } from 'node:fs';
import type Database from 'better-sqlite3';
import type { SqlValue } from '../../domain/item-fields.js';
import { INVENTORY_COLUMNS } from './columns.js';
import { csvHeader, csvRecords, writeChunks } from './csv.js';
import { RecordEnds } from './csv-records.js';
import { ID_AT, type ItemSource, sliceSql } from './inventory-csv.js';
import { keyedRows, SLICE } from './slices.js';

/**
 * `inventory.csv` of a run spliced from the published one of the run its changes count from: the
 * records of the items that did not change are copied byte for byte, the added and updated items'
 * records are written by csv.ts as a full write writes them, and the removed items' are left out.
 * Records are in id order, so walking the published file beside that file's snapshot's ids (in the
 * same order) and the changes puts each record where a full write puts it. The reference is
 * `writeInventoryCsv`; a property test holds the two to the same bytes
 * (test/export/formats/inventory-splice.test.ts).
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
 * it, then the record itself unless `expected` says which bytes it must be to be left out (''
 * after the last one: nothing may follow).
 */
interface Step {
  readonly before: string;
  readonly expected?: string;
}

const HEADER = csvHeader(INVENTORY_COLUMNS.map((column) => column.name));

/**
 * The published file's records, from its header on, each copied or left out as `merge` says, with
 * the records it adds. Copied records go out as slices of the chunks read: no record is decoded.
 */
async function* splicedChunks(merge: Merge, file: string): AsyncGenerator<Buffer | string> {
  yield HEADER;
  const ends = new RecordEnds();
  // The header is left out and checked like a removed record: the new one is written above.
  let step: Step = { before: '', expected: HEADER };
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
      if (step.expected === undefined && (next.expected !== undefined || next.before !== '')) {
        yield chunk.subarray(from, end);
        from = end;
      }
      if (next.before !== '') yield next.before;
      step = next;
    }
    if (step.expected !== undefined) dropped.push(chunk.subarray(from));
    else if (from < chunk.length) yield chunk.subarray(from);
  }
  if (step.expected !== '' || dropped.some((piece) => piece.length > 0)) {
    throw new UnlikeSnapshot('its records end before its snapshot’s items do');
  }
  yield merge.rest();
}

function check(record: readonly Buffer[], expected: string): void {
  if (!Buffer.concat(record).equals(Buffer.from(expected))) {
    throw new UnlikeSnapshot(
      expected === '' ? 'it holds more records than its snapshot has items' : 'a record is not as written',
    );
  }
}

/**
 * The published snapshot's ids and the changes, both in id order, merged: each change is tied to
 * the published id it comes at (`at`: its own, or for an added item the next one; null after the
 * last), so that ids are only ever compared for equality, never ordered outside SQLite.
 */
class Merge {
  private readonly ids: Iterator<unknown[]>;
  private readonly changes: Iterator<unknown[]>;
  private readonly written: Iterator<unknown[]>;
  private readonly leftOut: Iterator<unknown[]>;
  private change: unknown[] | undefined;

  constructor(db: Database.Database, items: ItemSource) {
    this.ids = keyedRows(
      db,
      (bounded) =>
        `SELECT id FROM published.items${bounded ? ' WHERE id > @after' : ''} ORDER BY id LIMIT ${SLICE}`,
    );
    this.changes = keyedRows(
      db,
      (bounded) =>
        `SELECT c.id, c.change, (SELECT min(o.id) FROM published.items o WHERE o.id >= c.id)
           FROM main.changes c${bounded ? ' WHERE c.id > @after' : ''} ORDER BY c.id LIMIT ${SLICE}`,
    );
    const changed = (from: string, which: string): ItemSource => ({
      from,
      where: `id IN (SELECT id FROM main.changes WHERE change ${which})`,
      column: items.column,
    });
    this.written = keyedRows(
      db,
      (bounded) => sliceSql(changed('main.items', "<> 'removed'"), bounded),
      ID_AT,
    );
    this.leftOut = keyedRows(
      db,
      (bounded) => sliceSql(changed('published.items', "<> 'added'"), bounded),
      ID_AT,
    );
    this.change = this.changes.next().value;
  }

  /** The step at the published file's next record; past its snapshot's last id, nothing may follow. */
  next(): Step {
    const id = this.ids.next();
    if (id.done) return { before: '', expected: '' };
    let before = '';
    let expected: string | undefined;
    while (this.change !== undefined && this.change[2] === id.value[0]) {
      if (this.change[1] !== 'removed') before += record(this.written);
      if (this.change[1] !== 'added') expected = record(this.leftOut);
      this.change = this.changes.next().value;
    }
    return expected === undefined ? { before } : { before, expected };
  }

  /** The records of the items added after the published snapshot's last id (their `at` is null). */
  rest(): string {
    let after = '';
    while (this.change !== undefined) {
      after += record(this.written);
      this.change = this.changes.next().value;
    }
    return after;
  }
}

function record(rows: Iterator<unknown[]>): string {
  return csvRecords([rows.next().value as SqlValue[]], INVENTORY_COLUMNS);
}
