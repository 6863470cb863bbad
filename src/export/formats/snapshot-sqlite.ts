import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { decimalReal, SHOP_KEY, type SnapshotColumn } from '../../domain/item-fields.js';
import { lazily } from '../../store/per-connection.js';
import {
  CHANGE_TABLE_COLUMNS,
  ITEM_TABLE_COLUMNS,
  type ItemTableColumn,
  SHOP_TABLE_COLUMNS,
} from './columns.js';
import { type ItemSource, storeItems } from './inventory-csv.js';
import type { RunContents } from './run-contents.js';
import { inBatches, inKeyRanges, inRange, inSlices, keyed, SLICE } from './slices.js';

/**
 * `snapshot.sqlite`: one complete run, self-contained, for consumers that would rather query than
 * parse CSV. Prices are REAL so that comparisons and ordering work, with the exact decimal beside
 * them as `*_text`; booleans are 0/1; lists are JSON arrays. What the API sent that the schema does not
 * read (`raw`) stays in the store: consumers get the normalised values only. The README documents every table.
 *
 * SQLite fills `items` and `shops` itself from the store, ATTACHed to the snapshot's connection (only
 * ever read through it), in slices by id with a turn of the event loop between them. That build is
 * the reference; a run whose previous run's snapshot is published starts from a copy of that file
 * instead and writes only the changed items (`updateSnapshotSqlite`).
 */

/** Bumped whenever a table changes shape; a consumer can check `meta.schema_version`. */
export const SNAPSHOT_SCHEMA_VERSION = 2;

const columnsSql = (columns: readonly { column: string; sqlType: string; notNull: boolean }[]) =>
  columns.map((c) => `${c.column} ${c.sqlType}${c.notNull ? ' NOT NULL' : ''}`).join(',\n    ');

const SCHEMA = `
  CREATE TABLE meta (
    shop TEXT NOT NULL,
    run INTEGER NOT NULL,
    previous_run INTEGER,
    generated_at TEXT NOT NULL,
    schema_version INTEGER NOT NULL
  );
  CREATE TABLE run (
    run INTEGER PRIMARY KEY,
    shop TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    pages INTEGER NOT NULL,
    items INTEGER NOT NULL,
    added INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    removed INTEGER NOT NULL,
    invalid INTEGER NOT NULL,
    previous_run INTEGER
  );
  -- A rowid table, filled in id order, packs its pages fuller than a WITHOUT ROWID one (about 10 %).
  CREATE TABLE items (
    ${columnsSql(ITEM_TABLE_COLUMNS)},
    PRIMARY KEY (id)
  );
  CREATE TABLE shops (
    ${columnsSql(SHOP_TABLE_COLUMNS)},
    PRIMARY KEY (${SHOP_KEY.name})
  ) WITHOUT ROWID;
  CREATE TABLE changes (
    ${columnsSql(CHANGE_TABLE_COLUMNS)},
    PRIMARY KEY (id)
  ) WITHOUT ROWID;
`;

/**
 * A complete `snapshot.sqlite`, still open. No secondary index: `items` is keyed by id, and a
 * consumer who queries another column often adds the index it needs to its copy.
 */
export interface SnapshotSqlite {
  /** Its items, for `writeInventoryCsv` on `db`. */
  readonly items: ItemSource;
  readonly db: Database.Database;
  close(): void;
}

/** Creates `file` (which must not exist yet) of the run: its items read from the store at `storePath`, its changes. */
export async function buildSnapshotSqlite(
  file: string,
  storePath: string,
  contents: RunContents,
): Promise<SnapshotSqlite> {
  writeFileSync(file, EMPTY_FILE.bytes, { flag: 'wx' });
  return withSnapshot(file, storePath, async (db) => {
    await describe(db, contents);
    await copyItems(
      db,
      (bounded) =>
        `INSERT INTO items (${names(ITEM_TABLE_COLUMNS)}) SELECT ${values(ITEM_TABLE_COLUMNS)}
           FROM ${STORE.from} WHERE ${STORE.where}${bounded ? ' AND v.id > @after' : ''}
          ORDER BY v.id LIMIT ${SLICE}`,
      contents.run.run,
    );
    await fillShops(db, contents.run.run);
  });
}

/**
 * Turns `file`, a copy of the snapshot file of the complete run `contents.previousRun`, into the
 * snapshot of the run: its description and changes are written again, and only the changed items'
 * rows in `items` (removed ones deleted, added and updated ones written from the store in place) and
 * the rows in `shops` of the shops those items were or are in. The changes are every difference between the two runs' items, so
 * the rows are those of a build; a property test holds it to one (test/export/formats/snapshot-sqlite.test.ts).
 * Bench at 100,000 items: an unchanged resync takes 3.0 s of CPU with it, not 3.5 s; a 1 % resync, with
 * inventory.csv spliced, 6.98 s, not 9.38 s (medians, docs/benchmark.md).
 */
export function updateSnapshotSqlite(
  file: string,
  storePath: string,
  contents: RunContents,
): Promise<SnapshotSqlite> {
  return withSnapshot(file, storePath, async (db) => {
    db.exec('DELETE FROM meta; DELETE FROM run; DELETE FROM changes;');
    await describe(db, contents);
    const touched = touchedShops(db);
    touched.note();
    await writeChangedItems(db, contents.run.run);
    touched.note();
    touched.refill(contents.run.run);
  });
}

/**
 * The shops of the changed items, before and after they are written (`note`), and their rows written
 * again (`refill`): a shop none of whose items changed, arrived or left keeps its first item, so its
 * row. Rebuilding every row read all of `items` again, ~0.1 s of CPU at 100,000 items; a touched
 * shop's first item is found by walking the ids in order, which stops at once unless other shops'
 * items come first.
 */
function touchedShops(db: Database.Database) {
  const key = SHOP_KEY.name;
  db.exec(`CREATE TEMP TABLE IF NOT EXISTS touched_shops (key PRIMARY KEY) WITHOUT ROWID;
           DELETE FROM touched_shops`);
  const note = db.prepare(
    `INSERT OR IGNORE INTO touched_shops SELECT ${key} FROM items WHERE id IN (SELECT id FROM changes)`,
  );
  const remove = db.prepare(`DELETE FROM shops WHERE ${key} IN (SELECT key FROM touched_shops)`);
  const add = db.prepare(
    `INSERT INTO shops (${names(SHOP_TABLE_COLUMNS)}) SELECT ${values(SHOP_TABLE_COLUMNS)}
       FROM ${STORE.from}
      WHERE v.id IN (SELECT (SELECT i.id FROM items i WHERE i.${key} = t.key ORDER BY i.id LIMIT 1)
                       FROM touched_shops t)
        AND ${STORE.where}`,
  );
  return {
    note: () => note.run(),
    refill: (run: number) =>
      db.transaction(() => {
        remove.run();
        add.run({ run });
      })(),
  };
}

/**
 * Applies the file's `changes` to its `items`, a slice of change ids at a time: removed items are
 * deleted, the others written from the store's run `run` (an updated row keeps its place).
 */
async function writeChangedItems(db: Database.Database, run: number): Promise<void> {
  const ids = (bounded: boolean) => `SELECT id AS key FROM changes${bounded ? ' WHERE id > @after' : ''}`;
  const inSlice = (bounded: boolean, which: string) =>
    `SELECT id FROM changes WHERE change ${which} AND ${inRange('id', bounded)}`;
  const remove = keyed(db, (bounded) => `DELETE FROM items WHERE id IN (${inSlice(bounded, "= 'removed'")})`);
  const write = keyed(
    db,
    (bounded) =>
      `INSERT INTO items (${names(ITEM_TABLE_COLUMNS)}) SELECT ${values(ITEM_TABLE_COLUMNS)}
         FROM ${STORE.from} WHERE v.id IN (${inSlice(bounded, "<> 'removed'")}) AND ${STORE.where}
       ON CONFLICT (id) DO UPDATE SET ${ITEM_TABLE_COLUMNS.map((c) => `${c.column} = excluded.${c.column}`).join(', ')}`,
  );
  await inKeyRanges(db, ids, (after, last) => {
    remove(after).run({ after, last });
    write(after).run({ after, last, run });
  });
}

/** Writes the run's description and its changes into the file's empty `meta`, `run` and `changes`. */
async function describe(db: Database.Database, contents: RunContents): Promise<void> {
  db.transaction(() => writeHeader(db, contents))();
  // Prepared at the first change: most runs of a quiet shop have none.
  const insert = lazily(() =>
    db.prepare(
      `INSERT INTO changes (${names(CHANGE_TABLE_COLUMNS)}) VALUES (${CHANGE_TABLE_COLUMNS.map(() => '?').join(', ')})`,
    ),
  );
  await inBatches(db, contents.changes, (change) =>
    insert().run(CHANGE_TABLE_COLUMNS.map((c) => c.value(change))),
  );
}

/**
 * Copies items in slices: `insert(bounded)` inserts the next SLICE of them after id `@after` (of run
 * `@run`), in id order, so that the largest id so far is the last one copied.
 */
async function copyItems(
  db: Database.Database,
  insert: (bounded: boolean) => string,
  run: number,
): Promise<void> {
  const copy = keyed(db, insert);
  const last = db.prepare('SELECT max(id) FROM items').pluck();
  await inSlices(db, (after) =>
    copy(after).run({ run, after }).changes === 0 ? null : (last.get() as string),
  );
}

/**
 * Opens `file` with the store attached and lets `fill` write it. The file is a temporary one until
 * it is complete: no journal file, no syncs. `journal_mode = OFF` is refused on better-sqlite3's
 * connections (they are opened in SQLite's defensive mode) and left each slice's transaction a
 * journal file created and deleted beside the file (about 200 at 100,000 items): the journal is kept
 * in memory instead.
 */
async function withSnapshot(
  file: string,
  storePath: string,
  fill: (db: Database.Database) => Promise<void>,
): Promise<SnapshotSqlite> {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    attach(db, storePath, 'store');
    db.pragma(`cache_size = ${CACHE_SIZE}`);
    db.function('decimal_real', { deterministic: true }, decimalReal);
    await fill(db);
    return { items: SNAPSHOT_ITEMS, db, close: () => db.close() };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Pages each file keeps in memory (in KiB, as SQLite takes a negative size): reading in order and
 * appending need few, and every megabyte more is resident while the sync's own memory is.
 */
const CACHE_SIZE = -2048;

/** Attaches the database `file` as `schema`: the feeds only ever read it through this connection. */
function attach(db: Database.Database, file: string, schema: string): void {
  db.prepare(`ATTACH DATABASE ? AS ${schema}`).run(file);
  db.pragma(`${schema}.cache_size = ${CACHE_SIZE}`);
}

/** The run's items in the store, attached to the snapshot's connection. */
const STORE = storeItems('store');

/**
 * The snapshot's own items: a field's value as the store represents it is in its column of the same
 * representation (a decimal's `_text` one beside its REAL).
 */
const SNAPSHOT_ITEMS: ItemSource = {
  from: 'items',
  where: 'true',
  column: (field) => (field.snapshot.find((s) => s.sqlType !== 'REAL') as SnapshotColumn).column,
};

const names = (columns: readonly { column: string }[]) => columns.map((c) => c.column).join(', ');

/**
 * What each column holds, from the store's value of its field: the store keeps values as the
 * snapshot does (`storedValue`), except that a decimal's REAL column is computed from its text, by
 * JavaScript (`decimalReal`) so that it is exactly the number a consumer's `Number(text)` reads.
 */
const values = (columns: readonly ItemTableColumn[]) =>
  columns
    .map((c) => (c.sqlType === 'REAL' ? `decimal_real(${STORE.column(c.field)})` : STORE.column(c.field)))
    .join(', ');

/**
 * One row per shop of the items, with its details as its first item (by id) has them; filled from
 * the items in id order, so the first slice that holds a shop decides.
 */
async function fillShops(db: Database.Database, run: number): Promise<void> {
  const add = keyed(
    db,
    (bounded) =>
      `INSERT INTO shops (${names(SHOP_TABLE_COLUMNS)}) SELECT ${values(SHOP_TABLE_COLUMNS)}
         FROM ${STORE.from}
        WHERE v.id IN (SELECT min(id) FROM items WHERE ${inRange('id', bounded)} GROUP BY ${SHOP_KEY.name})
          AND ${STORE.where}
       ON CONFLICT (${SHOP_KEY.name}) DO NOTHING`,
  );
  const ids = (bounded: boolean) => `SELECT id AS key FROM items${bounded ? ' WHERE id > @after' : ''}`;
  await inKeyRanges(db, ids, (after, last) => add(after).run({ after, last, run }));
}

/**
 * Whether the snapshot file `file` describes complete run `run` in this version's tables: then the
 * snapshot of a later run can start from it (`updateSnapshotSqlite`).
 */
export function isSnapshotOf(file: string, run: number): boolean {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const meta = db.prepare('SELECT run, schema_version FROM meta').get() as
      | { run: number; schema_version: number }
      | undefined;
    if (meta?.run !== run || meta.schema_version !== SNAPSHOT_SCHEMA_VERSION) return false;
    const tables = db.prepare("SELECT group_concat(sql, ';') FROM sqlite_schema WHERE type = 'table'");
    return tables.pluck().get() === EMPTY_FILE.tables;
  } finally {
    db.close();
  }
}

/** The run a snapshot file describes, from its `meta`; null for a file without one (an older version's). */
export function snapshotRun(file: string): number | null {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const hasMeta = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'").get();
    if (!hasMeta) return null;
    return (db.prepare('SELECT run FROM meta').pluck().get() as number | undefined) ?? null;
  } finally {
    db.close();
  }
}

/**
 * A new file with the tables and nothing in them: its bytes, and the tables' definitions as SQLite
 * records them, to recognise a file of exactly this schema. Made once a process: executing the schema
 * for every new file took about 0.5 ms of each small shop's sync.
 */
const EMPTY_FILE = (() => {
  const db = new Database(':memory:');
  try {
    // Larger pages waste less of each page on rows of a few hundred bytes: about 5 % smaller.
    db.pragma('page_size = 16384');
    db.exec(SCHEMA);
    const tables = db.prepare("SELECT group_concat(sql, ';') FROM sqlite_schema WHERE type = 'table'");
    return { bytes: db.serialize(), tables: tables.pluck().get() };
  } finally {
    db.close();
  }
})();

function writeHeader(db: Database.Database, header: RunContents): void {
  db.prepare(
    `INSERT INTO meta (shop, run, previous_run, generated_at, schema_version)
     VALUES (?, ?, ?, ?, ?)`,
  ).run(header.shop, header.run.run, header.previousRun, new Date().toISOString(), SNAPSHOT_SCHEMA_VERSION);
  db.prepare(
    `INSERT INTO run (run, shop, started_at, finished_at, pages, items, added, updated, removed, invalid, previous_run)
     VALUES (@run, @shop, @started_at, @finished_at, @pages, @items, @added, @updated, @removed, @invalid, @previous_run)`,
  ).run({
    run: header.run.run,
    shop: header.shop,
    started_at: header.run.started_at,
    finished_at: header.run.finished_at,
    pages: header.run.pages,
    items: header.run.items,
    added: header.run.added,
    updated: header.run.updated,
    removed: header.run.removed,
    invalid: header.run.invalid,
    previous_run: header.previousRun,
  });
}

/** Writes a whole snapshot file of `contents`, reading the store at `storePath`. */
export async function writeSnapshotSqlite(
  file: string,
  storePath: string,
  contents: RunContents,
): Promise<void> {
  (await buildSnapshotSqlite(file, storePath, contents)).close();
}
