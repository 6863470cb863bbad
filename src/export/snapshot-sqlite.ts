import { setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { Change } from '../domain/change.js';
import { type Item, TRACKED_FIELDS } from '../domain/item.js';
import { type SqlValue, sqlValue } from '../store/item-row.js';
import type { RunContents } from './run-contents.js';

/**
 * `snapshot.sqlite`: one complete run, self-contained, for consumers that would rather query than
 * parse CSV. Prices stay exact decimal TEXT (cast them to compare numerically), booleans are 0/1,
 * lists are JSON arrays. Item JSON as received (`raw`) stays in the store: consumers get the
 * normalised values only.
 */
const SCHEMA = `
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
  CREATE TABLE items (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    price TEXT NOT NULL,
    original_price TEXT,
    currency TEXT,
    quantity INTEGER NOT NULL,
    published INTEGER NOT NULL CHECK (published IN (0, 1)),
    created_at TEXT NOT NULL,
    url TEXT NOT NULL,
    web_url TEXT,
    photos TEXT NOT NULL,
    photos_id TEXT NOT NULL,
    description TEXT,
    raw_description TEXT,
    fbcomments TEXT,
    shop_id TEXT NOT NULL,
    shop_name TEXT NOT NULL,
    shop_url TEXT NOT NULL,
    shop_image TEXT,
    shop_items_url TEXT NOT NULL
  );
  CREATE TABLE changes (
    id TEXT PRIMARY KEY,
    change TEXT NOT NULL CHECK (change IN ('added', 'removed', 'updated')),
    title TEXT NOT NULL,
    changed_fields TEXT NOT NULL,
    price_before TEXT,
    price_after TEXT,
    quantity_before INTEGER,
    quantity_after INTEGER,
    published_before INTEGER,
    published_after INTEGER
  );
`;

/** Built after the rows are in: one sort per index instead of a b-tree update per row. */
const INDEXES = `
  CREATE INDEX items_title ON items (title);
  CREATE INDEX items_created_at ON items (created_at);
  CREATE INDEX items_published_quantity ON items (published, quantity);
  CREATE INDEX changes_change ON changes (change);
`;

/** Rows per transaction: large enough to be fast, small enough to let other work run in between. */
const BATCH = 5_000;

/** The run's description without its item and change lists. */
export type SnapshotHeader = Omit<RunContents, 'items' | 'changes'>;

/** A `snapshot.sqlite` being filled: items one by one (so they can be copied while read for another feed). */
export interface SnapshotSqlite {
  addItem(item: Item): void;
  addChanges(changes: Iterable<Change>): Promise<void>;
  /** Commits what is pending and builds the indexes; the file is then complete. */
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
    db.exec(SCHEMA);
    db.prepare(
      `INSERT INTO run (run, shop, started_at, finished_at, pages, items, added, updated, removed, invalid, previous_run)
       VALUES (@run, @shop, @started_at, @finished_at, @pages, @items, @added, @updated, @removed, @invalid, @previous_run)`,
    ).run({ ...header.run, shop: header.shop, previous_run: header.previousRun });
  } catch (error) {
    db.close();
    throw error;
  }
  const batch = batched(db);
  const insertItem = db.prepare(ITEM_INSERT);
  const insertChange = db.prepare(CHANGE_INSERT);
  return {
    addItem: (item) => batch.run(insertItem, itemRow(item)),
    addChanges: async (list) => {
      for (const change of list) {
        if (batch.run(insertChange, changeRow(change))) await nextTurn();
      }
    },
    finish: () => {
      batch.flush();
      db.exec(INDEXES);
    },
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

/** The `items` table's columns: the id and every tracked field (no raw JSON: consumers get values). */
const ITEM_FIELDS = ['id', ...TRACKED_FIELDS] as const;
const CHANGE_FIELDS = [
  'id',
  'change',
  'title',
  'changed_fields',
  'price_before',
  'price_after',
  'quantity_before',
  'quantity_after',
  'published_before',
  'published_after',
] as const;

const insertSql = (table: string, fields: readonly string[]) =>
  `INSERT INTO ${table} (${fields.join(', ')}) VALUES (${fields.map(() => '?').join(', ')})`;
const ITEM_INSERT = insertSql('items', ITEM_FIELDS);
const CHANGE_INSERT = insertSql('changes', CHANGE_FIELDS);

function itemRow(item: Item): SqlValue[] {
  return ITEM_FIELDS.map((field) => sqlValue(item[field]));
}

function changeRow(change: Change): SqlValue[] {
  const flag = (value: boolean | undefined) => (value === undefined ? null : value ? 1 : 0);
  return [
    change.id,
    change.change,
    change.title,
    change.fields.join('|'),
    change.before?.price ?? null,
    change.after?.price ?? null,
    change.before?.quantity ?? null,
    change.after?.quantity ?? null,
    flag(change.before?.published),
    flag(change.after?.published),
  ];
}
