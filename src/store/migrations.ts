import Database from 'better-sqlite3';
import { registerValuesHash } from './rehash.js';

/**
 * The schema, one step per version. `PRAGMA user_version` records the steps applied; steps are only
 * ever appended, never edited, so that any older store upgrades in place.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE runs (
    run INTEGER PRIMARY KEY AUTOINCREMENT,
    status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed')),
    query TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    heartbeat_at TEXT NOT NULL,
    checkpoint_page INTEGER NOT NULL DEFAULT 0,
    resumed_from_page INTEGER,
    pages INTEGER NOT NULL DEFAULT 0,
    items INTEGER NOT NULL DEFAULT 0,
    added INTEGER NOT NULL DEFAULT 0,
    updated INTEGER NOT NULL DEFAULT 0,
    removed INTEGER NOT NULL DEFAULT 0,
    invalid INTEGER NOT NULL DEFAULT 0,
    error TEXT
  );
  CREATE INDEX runs_status ON runs (status, run);

  CREATE TABLE item_versions (
    id TEXT NOT NULL,
    valid_from_run INTEGER NOT NULL,
    valid_to_run INTEGER,
    hash TEXT NOT NULL,
    title TEXT NOT NULL,
  price TEXT NOT NULL,
  original_price TEXT,
  currency TEXT,
  quantity INTEGER NOT NULL,
  published INTEGER NOT NULL,
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
  shop_items_url TEXT NOT NULL,
  raw TEXT NOT NULL,
    PRIMARY KEY (id, valid_from_run)
  );
  CREATE UNIQUE INDEX item_versions_current ON item_versions (id) WHERE valid_to_run IS NULL;
  CREATE INDEX item_versions_from ON item_versions (valid_from_run);
  CREATE INDEX item_versions_to ON item_versions (valid_to_run);

  CREATE TABLE staged_items (
    run INTEGER NOT NULL REFERENCES runs (run) ON DELETE CASCADE,
    id TEXT NOT NULL,
    page INTEGER NOT NULL,
    hash TEXT NOT NULL,
    title TEXT NOT NULL,
  price TEXT NOT NULL,
  original_price TEXT,
  currency TEXT,
  quantity INTEGER NOT NULL,
  published INTEGER NOT NULL,
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
  shop_items_url TEXT NOT NULL,
  raw TEXT NOT NULL,
    PRIMARY KEY (run, id)
  );

  CREATE TABLE invalid_items (
    run INTEGER NOT NULL REFERENCES runs (run) ON DELETE CASCADE,
    page INTEGER NOT NULL,
    id TEXT,
    reason TEXT NOT NULL
  );
  CREATE INDEX invalid_items_run ON invalid_items (run, id);

  CREATE TABLE lease (
    slot INTEGER PRIMARY KEY CHECK (slot = 1),
    holder TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    since TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  `,
  // Unchanged items are staged as (run, id, page, hash) only: their values are already in the open
  // version. Item columns become nullable; a staged row with `raw` NULL is such a compact row.
  `
  CREATE TABLE staged_items_v2 (
    run INTEGER NOT NULL REFERENCES runs (run) ON DELETE CASCADE,
    id TEXT NOT NULL,
    page INTEGER NOT NULL,
    hash TEXT NOT NULL,
    title TEXT,
  price TEXT,
  original_price TEXT,
  currency TEXT,
  quantity INTEGER,
  published INTEGER,
  created_at TEXT,
  url TEXT,
  web_url TEXT,
  photos TEXT,
  photos_id TEXT,
  description TEXT,
  raw_description TEXT,
  fbcomments TEXT,
  shop_id TEXT,
  shop_name TEXT,
  shop_url TEXT,
  shop_image TEXT,
  shop_items_url TEXT,
  raw TEXT,
    PRIMARY KEY (run, id)
  );
  INSERT INTO staged_items_v2 (run, id, page, hash, title, price, original_price, currency, quantity, published, created_at, url, web_url, photos, photos_id, description, raw_description, fbcomments, shop_id, shop_name, shop_url, shop_image, shop_items_url, raw)
    SELECT run, id, page, hash, title, price, original_price, currency, quantity, published, created_at, url, web_url, photos, photos_id, description, raw_description, fbcomments, shop_id, shop_name, shop_url, shop_image, shop_items_url, raw FROM staged_items;
  DROP TABLE staged_items;
  ALTER TABLE staged_items_v2 RENAME TO staged_items;
  `,
  // Each item is written once per run: a run writes its new and changed versions straight into
  // item_versions and closes the versions they supersede at itself (invisible until the run is
  // complete), and notes every id it read in run_seen. The staged rows of the latest run, when it is
  // unfinished, become exactly that, so that it still resumes where it stopped; no other run resumes.
  `
  DROP INDEX item_versions_current;
  CREATE INDEX item_versions_open ON item_versions (id) WHERE valid_to_run IS NULL;
  CREATE TABLE run_seen (
    run INTEGER NOT NULL,
    id TEXT NOT NULL,
    PRIMARY KEY (run, id)
  ) WITHOUT ROWID;
  CREATE TEMP VIEW resumable AS
    SELECT run FROM runs WHERE status <> 'complete' AND run = (SELECT max(run) FROM runs);
  INSERT INTO run_seen (run, id) SELECT run, id FROM staged_items WHERE run = (SELECT run FROM resumable);
  UPDATE item_versions SET valid_to_run = (SELECT run FROM resumable)
   WHERE valid_to_run IS NULL
     AND id IN (SELECT s.id FROM staged_items s
                 WHERE s.run = (SELECT run FROM resumable) AND s.raw IS NOT NULL AND s.hash <> item_versions.hash);
  INSERT INTO item_versions (id, valid_from_run, valid_to_run, hash, title, price, original_price, currency, quantity, published, created_at, url, web_url, photos, photos_id, description, raw_description, fbcomments, shop_id, shop_name, shop_url, shop_image, shop_items_url, raw)
    SELECT s.id, s.run, NULL, s.hash, s.title, s.price, s.original_price, s.currency, s.quantity, s.published, s.created_at, s.url, s.web_url, s.photos, s.photos_id, s.description, s.raw_description, s.fbcomments, s.shop_id, s.shop_name, s.shop_url, s.shop_image, s.shop_items_url, s.raw
      FROM staged_items s
     WHERE s.run = (SELECT run FROM resumable) AND s.raw IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM item_versions v
                        WHERE v.id = s.id AND v.valid_to_run IS NULL AND v.hash = s.hash);
  DROP VIEW resumable;
  DROP TABLE staged_items;
  `,
  // Which complete run the published feeds reflect (src/store/published.ts): one row once published.
  `
  CREATE TABLE published (
    slot INTEGER PRIMARY KEY CHECK (slot = 1),
    run INTEGER NOT NULL,
    published_at TEXT NOT NULL
  );
  `,
  // Cheaper staging. Each version gets a number that VACUUM keeps (`version`), in the order it was
  // written: an unchanged item is noted in `run_matched` by its version's number, so a resync appends
  // to one small index instead of inserting into one per id. The hash is the first 52 bits of the
  // SHA-1 (was its 40 hex digits). The versions of an id are found through one covering index (id,
  // runs, hash), and the open versions through `item_versions_to`, whose NULL range is in version
  // order. The `run_seen` rows of an unfinished run become the matches of the versions they confirmed.
  `
  CREATE TABLE item_versions_v5 (
    version INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    valid_from_run INTEGER NOT NULL,
    valid_to_run INTEGER,
    hash INTEGER NOT NULL,
    title TEXT NOT NULL,
  price TEXT NOT NULL,
  original_price TEXT,
  currency TEXT,
  quantity INTEGER NOT NULL,
  published INTEGER NOT NULL,
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
  shop_items_url TEXT NOT NULL,
  raw TEXT NOT NULL
  );
  INSERT INTO item_versions_v5 (id, valid_from_run, valid_to_run, hash, title, price, original_price, currency, quantity, published, created_at, url, web_url, photos, photos_id, description, raw_description, fbcomments, shop_id, shop_name, shop_url, shop_image, shop_items_url, raw)
    SELECT id, valid_from_run, valid_to_run,
           (instr('0123456789abcdef', substr(hash, 1, 1)) - 1) * 281474976710656 +
           (instr('0123456789abcdef', substr(hash, 2, 1)) - 1) * 17592186044416 +
           (instr('0123456789abcdef', substr(hash, 3, 1)) - 1) * 1099511627776 +
           (instr('0123456789abcdef', substr(hash, 4, 1)) - 1) * 68719476736 +
           (instr('0123456789abcdef', substr(hash, 5, 1)) - 1) * 4294967296 +
           (instr('0123456789abcdef', substr(hash, 6, 1)) - 1) * 268435456 +
           (instr('0123456789abcdef', substr(hash, 7, 1)) - 1) * 16777216 +
           (instr('0123456789abcdef', substr(hash, 8, 1)) - 1) * 1048576 +
           (instr('0123456789abcdef', substr(hash, 9, 1)) - 1) * 65536 +
           (instr('0123456789abcdef', substr(hash, 10, 1)) - 1) * 4096 +
           (instr('0123456789abcdef', substr(hash, 11, 1)) - 1) * 256 +
           (instr('0123456789abcdef', substr(hash, 12, 1)) - 1) * 16 +
           (instr('0123456789abcdef', substr(hash, 13, 1)) - 1) * 1,
           title, price, original_price, currency, quantity, published, created_at, url, web_url, photos, photos_id, description, raw_description, fbcomments, shop_id, shop_name, shop_url, shop_image, shop_items_url, raw
      FROM item_versions ORDER BY rowid;
  DROP TABLE item_versions;
  ALTER TABLE item_versions_v5 RENAME TO item_versions;
  CREATE INDEX item_versions_id ON item_versions (id, valid_from_run, valid_to_run, hash);
  CREATE INDEX item_versions_from ON item_versions (valid_from_run, valid_to_run);
  CREATE INDEX item_versions_to ON item_versions (valid_to_run);
  CREATE TABLE run_matched (
    run INTEGER NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (run, version)
  ) WITHOUT ROWID;
  INSERT INTO run_matched (run, version)
    SELECT s.run, v.version FROM run_seen s
      JOIN runs r ON r.run = s.run AND r.status <> 'complete'
      JOIN item_versions v ON v.id = s.id AND v.valid_to_run IS NULL AND v.valid_from_run < s.run;
  DROP TABLE run_seen;
  `,
  // A resumed run keeps its history: when its latest attempt resumed it, how many attempts it took, and
  // what stopped each earlier one (a JSON array of {at, code, message}); `error_code` keeps the machine
  // code beside the sentence in `error`. `checkpoint` is the listing reader's own resume state (JSON),
  // written with the pages it covers.
  `
  ALTER TABLE runs ADD COLUMN resumed_at TEXT;
  ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE runs ADD COLUMN earlier_errors TEXT NOT NULL DEFAULT '[]';
  ALTER TABLE runs ADD COLUMN error_code TEXT;
  ALTER TABLE runs ADD COLUMN checkpoint TEXT;
  `,
  // For readers of the store (README "inventory.sqlite"): prices are exact TEXT, on which `price > 100`
  // compares text, and `valid_to_run IS NULL` also shows what an unfinished run wrote. This view is the
  // latest complete run's items with each price also as a REAL, named as in snapshot.sqlite's `items`.
  // A later step that rebuilds item_versions or runs (create, copy, drop, rename) must drop the view
  // first and create it again after: SQLite refuses the rename while a view names the dropped table.
  `
  CREATE VIEW current_items AS
    SELECT v.id,
           CAST(v.price AS REAL) AS price, v.price AS price_text,
           CAST(v.original_price AS REAL) AS original_price, v.original_price AS original_price_text,
           v.quantity, v.published, v.title, v.currency, v.created_at, v.url, v.web_url, v.photos,
           v.photos_id, v.description, v.raw_description, v.fbcomments, v.shop_id, v.shop_name,
           v.shop_url, v.shop_image, v.shop_items_url, v.raw, latest.run, v.valid_from_run
      FROM (SELECT max(run) AS run FROM runs WHERE status = 'complete') latest
      JOIN item_versions v
        ON v.valid_from_run <= latest.run AND (v.valid_to_run IS NULL OR v.valid_to_run > latest.run);
  `,
  // What each version was read from: a hash of the item's text as sent (`sent-text.ts`), so that an
  // item sent as the same text again is known unchanged without reading it. Versions written before
  // have none, and get it the next time they are read with their values. A change to how text is read
  // into an item must clear it (`UPDATE item_versions SET sent = NULL`) in its own migration. The
  // covering index of an id's versions carries it: a run loads every current one from the index alone.
  // The item hash becomes `valuesHash` (was the SHA-1 of the values' JSON): every version's is
  // computed again (`item_values_hash`, registered by `migrate`).
  `
  ALTER TABLE item_versions ADD COLUMN sent INTEGER;
  UPDATE item_versions SET hash = item_values_hash(title, price, original_price, currency, quantity,
    published, created_at, url, web_url, photos, photos_id, description, raw_description, fbcomments,
    shop_id, shop_name, shop_url, shop_image, shop_items_url);
  DROP INDEX item_versions_id;
  CREATE INDEX item_versions_id ON item_versions (id, valid_from_run, valid_to_run, hash, sent);
  `,
  // Listing bodies read in full, by the SHA-256 of their bytes, with each element's id and text hash
  // (`store/read-bodies.ts`): a body received again byte for byte is not parsed. `run` is the latest run
  // that received it. A change to how text is hashed (`sent`) must empty this table too. A rowid table:
  // rows of a few KB in a WITHOUT ROWID table cost three times as much to write and update.
  `
  CREATE TABLE listing_bodies (
    digest TEXT NOT NULL UNIQUE,
    elements TEXT NOT NULL,
    run INTEGER NOT NULL
  );
  CREATE INDEX listing_bodies_run ON listing_bodies (run);
  `,
  // Each listing body's elements as stored versions (`store/read-bodies.ts`): `versions` is
  // `[[version...], [hash...]]`, one of each per element, as run `versions_run` wrote or matched them. A
  // body received again is then known unchanged from its row alone while that run is complete and none
  // of those versions was closed at it or after. Rows written before know no versions: their bodies are
  // looked up element by element once more, which records them.
  `
  ALTER TABLE listing_bodies ADD COLUMN versions TEXT;
  ALTER TABLE listing_bodies ADD COLUMN versions_run INTEGER;
  `,
  // The origins of the base URLs that gave this shop a complete run (`store/answered-origins.ts`): once
  // one has, failing to reach it is an outage, not a wrong setting.
  `
  CREATE TABLE answered_origins (
    origin TEXT PRIMARY KEY,
    run INTEGER NOT NULL
  );
  `,
  // A run may be held (`held`: it would have removed more than SYNC_MAX_REMOVED allows). SQLite cannot
  // change a CHECK in place: the table is built again with its rows, its index, its AUTOINCREMENT
  // counter (pruned runs' numbers are never given again: the copy's own counter, at its highest row, is
  // replaced by the old one) and the view that names it.
  `
  DROP VIEW current_items;
  CREATE TABLE runs_v12 (
    run INTEGER PRIMARY KEY AUTOINCREMENT,
    status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'held', 'failed')),
    query TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    heartbeat_at TEXT NOT NULL,
    checkpoint_page INTEGER NOT NULL DEFAULT 0,
    resumed_from_page INTEGER,
    pages INTEGER NOT NULL DEFAULT 0,
    items INTEGER NOT NULL DEFAULT 0,
    added INTEGER NOT NULL DEFAULT 0,
    updated INTEGER NOT NULL DEFAULT 0,
    removed INTEGER NOT NULL DEFAULT 0,
    invalid INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    resumed_at TEXT,
    attempts INTEGER NOT NULL DEFAULT 1,
    earlier_errors TEXT NOT NULL DEFAULT '[]',
    error_code TEXT,
    checkpoint TEXT
  );
  INSERT INTO runs_v12 SELECT * FROM runs;
  DELETE FROM sqlite_sequence WHERE name = 'runs_v12';
  INSERT INTO sqlite_sequence (name, seq) SELECT 'runs_v12', seq FROM sqlite_sequence WHERE name = 'runs';
  DROP TABLE runs;
  ALTER TABLE runs_v12 RENAME TO runs;
  CREATE INDEX runs_status ON runs (status, run);
  CREATE VIEW current_items AS
    SELECT v.id,
           CAST(v.price AS REAL) AS price, v.price AS price_text,
           CAST(v.original_price AS REAL) AS original_price, v.original_price AS original_price_text,
           v.quantity, v.published, v.title, v.currency, v.created_at, v.url, v.web_url, v.photos,
           v.photos_id, v.description, v.raw_description, v.fbcomments, v.shop_id, v.shop_name,
           v.shop_url, v.shop_image, v.shop_items_url, v.raw, latest.run, v.valid_from_run
      FROM (SELECT max(run) AS run FROM runs WHERE status = 'complete') latest
      JOIN item_versions v
        ON v.valid_from_run <= latest.run AND (v.valid_to_run IS NULL OR v.valid_to_run > latest.run);
  `,
  // An element's hash (`sent`) is of its bytes as sent, no longer of its decoded text (`sent-text.ts`),
  // so that a changed answer is read element by element without decoding what it shares with the
  // answer before. The hashes of texts are cleared (a version learns its bytes' hash the next time it is
  // read, as versions written before `sent` did), and with them the bodies' rows, made of such hashes.
  // A row now names the page it was received as (`page`: the request as shown), so that a changed
  // answer of that page is read against it.
  `
  UPDATE item_versions SET sent = NULL WHERE sent IS NOT NULL;
  DELETE FROM listing_bodies;
  ALTER TABLE listing_bodies ADD COLUMN page TEXT;
  CREATE INDEX listing_bodies_page ON listing_bodies (page);
  `,
  // The run that last received each listing body moves to a table of its own (`store/read-bodies.ts`):
  // an unchanged resync receives every body again, and setting the run in a row of ~5.6 KB wrote that
  // row's page whole, a third of what such a resync wrote to its WAL. Its rows are keyed by the body's
  // number (`body`, its rowid made explicit so that VACUUM keeps it), given in the order bodies are
  // learnt, about the listing's: a batch's pages then share a page or two of it, where keyed by digest
  // they touched most of its pages. A body and its run are written in one transaction; a run without its
  // body (a process stopped while they were deleted) is dropped with the next complete run's leftovers,
  // or overwritten by the body that takes its number.
  `
  CREATE TABLE listing_bodies_v14 (
    body INTEGER PRIMARY KEY,
    digest TEXT NOT NULL UNIQUE,
    elements TEXT NOT NULL,
    versions TEXT,
    versions_run INTEGER,
    page TEXT
  );
  INSERT INTO listing_bodies_v14 (body, digest, elements, versions, versions_run, page)
    SELECT rowid, digest, elements, versions, versions_run, page FROM listing_bodies;
  CREATE TABLE listing_body_runs (
    body INTEGER PRIMARY KEY,
    run INTEGER NOT NULL
  );
  INSERT INTO listing_body_runs (body, run) SELECT rowid, run FROM listing_bodies;
  DROP TABLE listing_bodies;
  ALTER TABLE listing_bodies_v14 RENAME TO listing_bodies;
  CREATE INDEX listing_bodies_page ON listing_bodies (page);
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings a store's schema up to date. A new store (version 0) gets the current schema in one
 * transaction, from `currentSchema()`, instead of every step of its history: replaying them on an empty
 * file took most of a small shop's first sync. Another process may create the same store meanwhile: the
 * version is read again inside the transaction.
 */
export function migrate(db: Database.Database): void {
  if (schemaVersion(db) === 0)
    db.transaction(() => {
      if (schemaVersion(db) !== 0) return;
      db.exec(currentSchema());
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
  replayMigrations(db);
}

/** Applies, one transaction each, the steps a store has not had yet: the reference for `currentSchema`. */
export function replayMigrations(db: Database.Database): void {
  const current = schemaVersion(db);
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `its schema version ${current} is newer than this shop-sync understands (${SCHEMA_VERSION})`,
    );
  }
  if (current < SCHEMA_VERSION) registerValuesHash(db);
  for (let version = current; version < SCHEMA_VERSION; version += 1) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version] as string);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}

function schemaVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

let schemaScript: string | undefined;

/**
 * The statements that create the schema every step leaves, derived from the steps themselves (replayed
 * once per process on a database in memory, about 10 ms) and read back from `sqlite_master` as SQLite
 * keeps them: tables, then their indexes, then views. Its own objects (`sqlite_sequence`, the automatic
 * indexes) come with the tables. `test/store/migrations.test.ts` holds a store created from it equal to
 * one migrated step by step.
 */
export function currentSchema(): string {
  if (schemaScript === undefined) {
    const memory = new Database(':memory:');
    try {
      replayMigrations(memory);
      const statements = memory
        .prepare(
          `SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid`,
        )
        .pluck()
        .all() as string[];
      schemaScript = statements.map((sql) => `${sql};`).join('\n');
    } finally {
      memory.close();
    }
  }
  return schemaScript;
}
