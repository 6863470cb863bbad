import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import type { StoredVersion } from '../domain/unchanged-item.js';
import { ITEM_COLUMNS, itemHash, itemValues } from './item-row.js';
import { statementsPerConnection } from './per-connection.js';
import { recordBodiesOf } from './read-bodies.js';
import type { ReadItems } from './write-items.js';

/**
 * A first sync's versions, written with plain inserts. The per-batch writer (`writeItems`) keeps the
 * index of ids (`item_versions_id`) as it goes, and a first sync's ids arrive in no order: each batch's
 * COMMIT wrote most of that index's pages to the WAL again. A store with no versions at all drops the
 * index in the transaction of its first batch, and `finishBulkLoad` builds it once, in id order, when
 * the reading ends; the other indexes of `item_versions` are appended to in order anyway. Staging
 * 100,000 new items took 17-24 % less CPU, a first sync of 300,000 17 % less (docs/benchmark.md). An id read twice is inserted twice and
 * keeps its latest reading then, as the per-batch writer would have kept it (the property test
 * test/properties/bulk-load.test.ts holds the two to the same store).
 *
 * The store is in this state (no index of ids) only while one process's first sync reads: a process
 * that dies in it leaves only what an unfinished run wrote, and the next run to begin (`beginRun`)
 * ends the bulk load before anything looks up an id, whether it then resumes that run (with the
 * per-batch writer) or discards it.
 */
export class BulkLoad {
  private readonly inserted = new InsertedIds();
  /** The versions the latest `write` inserted, by id, with the hash of the text each was read from. */
  private written = new Map<string, StoredVersion & { readonly sent: number | undefined }>();

  private constructor(
    private readonly db: Database.Database,
    private readonly run: number,
  ) {}

  /**
   * In the caller's transaction: a bulk load when the store holds no version at all (the index of ids
   * is then dropped), else undefined: the run writes through `writeItems`.
   */
  static begin(db: Database.Database, run: number): BulkLoad | undefined {
    if (!isBulkLoading(db)) {
      if (statements(db).anyVersion.get() === 1) return undefined;
      db.exec(`DROP INDEX ${ID_INDEX.name}`);
    }
    return new BulkLoad(db, run);
  }

  /**
   * Inserts every item read, in the caller's transaction; returns how many ids were new to the run, as
   * far as its 32-bit hashes of the ids tell (the run's counts are taken again at its commit).
   */
  write(pages: readonly ReadItems[]): number {
    const { insert } = statements(this.db);
    let fresh = 0;
    this.written = new Map();
    for (const read of pages) {
      if ((read.unchanged?.length ?? 0) > 0)
        throw new Error('a bulk load was handed items known unchanged, but the store holds no version');
      for (const [index, item] of read.items.entries()) {
        if (!this.inserted.mayHave(item.id)) fresh += 1;
        this.inserted.add(item.id);
        const hash = itemHash(item);
        const sent = read.sent?.[index];
        const { lastInsertRowid } = insert.run(this.run, ...itemValues(item, hash), sent ?? null);
        this.written.set(item.id, { version: Number(lastInsertRowid), hash, sent });
      }
    }
    return fresh;
  }

  /**
   * The version the latest `write` inserted for `id` from a text whose hash is `sent`: what the
   * listing bodies of its pages record, handed over rather than read back as the load ends.
   */
  readonly versionOf = (id: string, sent: number): StoredVersion | undefined => {
    const written = this.written.get(id);
    return written?.sent === sent ? written : undefined;
  };
}

/**
 * Ends a bulk load, in the caller's transaction, if the store is in one (a process stopped in it):
 * builds the index of ids, keeps of each id read more than once its latest version, and records the
 * versions of the listing bodies the run learnt. Nothing to do otherwise.
 */
export function endBulkLoad(db: Database.Database): void {
  if (!isBulkLoading(db)) return;
  buildIdIndex(db);
  const run = statements(db).latestRun.get() as number | null;
  if (run !== null) recordBodiesOf(db, run);
}

/**
 * Ends the bulk load of `run` once its listing is read: the index in one transaction, then the
 * versions of the listing bodies the staging could not record as it went (`BulkLoad.versionOf`),
 * and of those naming an id read more than once (its earlier versions are gone), in slices, each a
 * transaction of its own with a turn of the event loop between them (in one with the index, they
 * blocked the loop for seconds at 300,000 items, holding up lease renewals). A process stopped
 * between slices leaves bodies without versions, which the next run reads as it reads any body it
 * cannot vouch for.
 */
export async function finishBulkLoad(db: Database.Database, run: number, guard: () => void): Promise<void> {
  const readTwice = db
    .transaction(() => {
      guard();
      return buildIdIndex(db);
    })
    .immediate();
  const slice = db.transaction((after: number) => {
    guard();
    return recordBodiesOf(db, run, after, BODIES_PER_SLICE, { unrecordedOr: readTwice });
  });
  for (let after = slice.immediate(0); after !== undefined; after = slice.immediate(after)) await nextTurn();
}

/** Listing bodies recorded per slice: 100 pages of 100 items take about 0.05 s. */
const BODIES_PER_SLICE = 100;

/** Builds the index of ids and drops the earlier readings of ids read more than once; returns those ids. */
function buildIdIndex(db: Database.Database): string[] {
  db.exec(ID_INDEX.sql);
  return [...new Set(db.prepare(DROP_EARLIER_READINGS).pluck().all() as string[])];
}

/** Whether a bulk load has dropped the index of ids. */
function isBulkLoading(db: Database.Database): boolean {
  return statements(db).hasIndex.get(ID_INDEX.name) === undefined;
}

/**
 * The index of ids as migration 8 created it (a test holds the two equal): built again here, since
 * SQLite keeps no definition of an index it dropped.
 */
export const ID_INDEX = {
  name: 'item_versions_id',
  sql: 'CREATE INDEX item_versions_id ON item_versions (id, valid_from_run, valid_to_run, hash, sent)',
} as const;

/**
 * The ids a bulk load has inserted, kept as 32-bit hashes: a set of every id held 100 MB and more at
 * 1,000,000 items, this about a fifth of it. Only counts depend on it: at 1,000,000 ids about a
 * hundred share a hash with another and are not counted as new until the commit counts them.
 */
class InsertedIds {
  private readonly hashes = new Set<number>();

  add(id: string): void {
    this.hashes.add(fnv1a(id));
  }

  mayHave(id: string): boolean {
    return this.hashes.has(fnv1a(id));
  }
}

/** FNV-1a over the UTF-16 code units of `text`, as a small integer. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash | 0;
}

/** Prepared once per connection: none of them names the index of ids, which may be missing then. */
const statements = statementsPerConnection({
  hasIndex: (db) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").pluck(),
  anyVersion: (db) => db.prepare('SELECT EXISTS (SELECT 1 FROM item_versions)').pluck(),
  insert: (db) =>
    db.prepare(
      `INSERT INTO item_versions (valid_from_run, ${ITEM_COLUMNS.join(', ')}, sent)
         VALUES (?, ${ITEM_COLUMNS.map(() => '?').join(', ')}, ?)`,
    ),
  latestRun: (db) => db.prepare('SELECT max(valid_from_run) FROM item_versions').pluck(),
});

/**
 * An id has one open version: of an id read more than once, the versions before its latest go. Found
 * through the index of ids once it is built (a scan of it, 0.06 s of CPU at 100,000 items; without it
 * SQLite sorted the table's ids, 0.24 s).
 */
const DROP_EARLIER_READINGS = `DELETE FROM item_versions WHERE version IN (
  SELECT v.version
    FROM (SELECT id, max(version) AS latest FROM item_versions INDEXED BY ${ID_INDEX.name}
           WHERE valid_to_run IS NULL GROUP BY id HAVING count(*) > 1) d
    JOIN item_versions v INDEXED BY ${ID_INDEX.name} ON v.id = d.id AND v.valid_to_run IS NULL AND v.version < d.latest)
  RETURNING id`;
