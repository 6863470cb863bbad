import { setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { Change } from '../domain/change.js';
import type { Item } from '../domain/item.js';
import type { SqlValue } from '../domain/item-fields.js';
import { CHANGE_TABLE_COLUMNS, ITEM_TABLE_COLUMNS, SHOP_TABLE_COLUMNS, type TableColumn } from './columns.js';
import type { RunContents } from './run-contents.js';

/**
 * `snapshot.sqlite`: one complete run, self-contained, for consumers that would rather query than
 * parse CSV. Prices are REAL so that comparisons and ordering work, with the exact decimal beside
 * them as `*_text`; booleans are 0/1; lists are JSON arrays. Item JSON as received (`raw`) stays in
 * the store: consumers get the normalised values only. The README documents every table.
 */

/** Bumped whenever a table changes shape; a consumer can check `meta.schema_version`. */
export const SNAPSHOT_SCHEMA_VERSION = 2;

const columnsSql = <Row>(columns: readonly TableColumn<Row>[]) =>
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
    PRIMARY KEY (shop_id)
  ) WITHOUT ROWID;
  CREATE TABLE changes (
    ${columnsSql(CHANGE_TABLE_COLUMNS)},
    PRIMARY KEY (id)
  ) WITHOUT ROWID;
`;

/** Rows per transaction: large enough to be fast, small enough to let other work run in between. */
const BATCH = 5_000;

/** The run's description without its item and change lists. */
export type SnapshotHeader = Omit<RunContents, 'items' | 'changes'>;

/** A `snapshot.sqlite` being filled: items one by one (so they can be copied while read for another feed). */
export interface SnapshotSqlite {
  addItem(item: Item): void;
  addChanges(changes: Iterable<Change>): Promise<void>;
  /**
   * Commits what is pending; the file is then complete. No secondary index: `items` is keyed by id,
   * and a consumer who queries another column often adds the index it needs to its copy.
   */
  finish(): void;
  close(): void;
}

/** Creates `file` (which must not exist yet) with the run's description and empty item and change tables. */
export function createSnapshotSqlite(file: string, header: SnapshotHeader): SnapshotSqlite {
  const db = new Database(file);
  try {
    // The file is a temporary one until it is complete; a crash leaves only a file to delete.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    // Larger pages waste less of each page on rows of a few hundred bytes: about 5 % smaller.
    db.pragma('page_size = 16384');
    db.exec(SCHEMA);
    writeHeader(db, header);
  } catch (error) {
    db.close();
    throw error;
  }
  const batch = batched(db);
  const insertItem = db.prepare(insertSql('items', ITEM_TABLE_COLUMNS));
  const insertChange = db.prepare(insertSql('changes', CHANGE_TABLE_COLUMNS));
  const insertShop = db.prepare(`${insertSql('shops', SHOP_TABLE_COLUMNS)} ON CONFLICT (shop_id) DO NOTHING`);
  let lastShop: string | null = null;
  return {
    addItem: (item) => {
      // Items come by id, usually all of one shop: one row per shop, its details as its first item has them.
      if (item.shop_id !== lastShop) insertShop.run(rowOf(SHOP_TABLE_COLUMNS, item));
      lastShop = item.shop_id;
      return batch.run(insertItem, rowOf(ITEM_TABLE_COLUMNS, item));
    },
    addChanges: async (list) => {
      for (const change of list) {
        if (batch.run(insertChange, rowOf(CHANGE_TABLE_COLUMNS, change))) await nextTurn();
      }
    },
    finish: () => batch.flush(),
    close: () => db.close(),
  };
}

/** Writes a whole snapshot file from `contents`, yielding to the event loop between batches. */
export async function writeSnapshotSqlite(file: string, contents: RunContents): Promise<void> {
  const snapshot = createSnapshotSqlite(file, contents);
  try {
    let count = 0;
    for (const item of contents.items) {
      snapshot.addItem(item);
      count += 1;
      if (count % BATCH === 0) await nextTurn();
    }
    await snapshot.addChanges(contents.changes);
    snapshot.finish();
  } finally {
    snapshot.close();
  }
}

/**
 * Whether the snapshot file `file` holds exactly `run`'s items and no changes, in this version's
 * tables: then a later run with the same items can copy it and only rewrite its header.
 */
export function isReusableSnapshot(file: string, run: number): boolean {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const meta = db.prepare('SELECT run, schema_version FROM meta').get() as
      | { run: number; schema_version: number }
      | undefined;
    if (meta?.run !== run || meta.schema_version !== SNAPSHOT_SCHEMA_VERSION) return false;
    const tables = db.prepare("SELECT group_concat(sql, ';') FROM sqlite_schema WHERE type = 'table'");
    if (tables.pluck().get() !== EXPECTED_TABLES) return false;
    return db.prepare('SELECT count(*) FROM changes').pluck().get() === 0;
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

/** The tables' definitions as SQLite records them, to recognise a file of exactly this schema. */
const EXPECTED_TABLES = (() => {
  const db = new Database(':memory:');
  try {
    db.exec(SCHEMA);
    return db.prepare("SELECT group_concat(sql, ';') FROM sqlite_schema WHERE type = 'table'").pluck().get();
  } finally {
    db.close();
  }
})();

/** Rewrites the header of a reused snapshot file (a copy) for the run it now describes. */
export function rewriteSnapshotHeader(file: string, header: SnapshotHeader): void {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('journal_mode = OFF');
    db.transaction(() => {
      db.exec('DELETE FROM meta; DELETE FROM run;');
      writeHeader(db, header);
    })();
  } finally {
    db.close();
  }
}

function writeHeader(db: Database.Database, header: SnapshotHeader): void {
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

/** Runs inserts in transactions of BATCH rows; `run` says when it has just committed one. */
function batched(db: Database.Database): {
  run(insert: Database.Statement, values: SqlValue[]): boolean;
  flush(): void;
} {
  let pending = 0;
  const flush = () => {
    if (pending > 0) db.exec('COMMIT');
    pending = 0;
  };
  return {
    run: (insert, values) => {
      if (pending === 0) db.exec('BEGIN');
      insert.run(values);
      pending += 1;
      if (pending < BATCH) return false;
      flush();
      return true;
    },
    flush,
  };
}

const insertSql = <Row>(table: string, columns: readonly TableColumn<Row>[]) =>
  `INSERT INTO ${table} (${columns.map((c) => c.column).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;

function rowOf<Row>(columns: readonly TableColumn<Row>[], row: Row): SqlValue[] {
  return columns.map((c) => c.value(row));
}
