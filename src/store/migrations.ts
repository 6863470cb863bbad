import type Database from 'better-sqlite3';

/**
 * The schema, one step per version. `PRAGMA user_version` records the steps applied; steps are only
 * ever appended, never edited, so that any older store upgrades in place.
 */
const ITEM_COLUMNS = `
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
  raw TEXT NOT NULL`;

const ITEM_COLUMN_NAMES = ITEM_COLUMNS.split(',')
  .map((definition) => definition.trim().split(' ')[0])
  .join(', ');
const NULLABLE_ITEM_COLUMNS = ITEM_COLUMNS.replaceAll(' NOT NULL', '');

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
    ${ITEM_COLUMNS},
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
    ${ITEM_COLUMNS},
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
    ${NULLABLE_ITEM_COLUMNS},
    PRIMARY KEY (run, id)
  );
  INSERT INTO staged_items_v2 (run, id, page, hash, ${ITEM_COLUMN_NAMES})
    SELECT run, id, page, hash, ${ITEM_COLUMN_NAMES} FROM staged_items;
  DROP TABLE staged_items;
  ALTER TABLE staged_items_v2 RENAME TO staged_items;
  `,
  // Which complete run the published feeds reflect (src/store/published.ts): one row once published.
  `
  CREATE TABLE published (
    slot INTEGER PRIMARY KEY CHECK (slot = 1),
    run INTEGER NOT NULL,
    published_at TEXT NOT NULL
  );
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `its schema version ${current} is newer than this shop-sync understands (${SCHEMA_VERSION})`,
    );
  }
  for (let version = current; version < SCHEMA_VERSION; version += 1) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version] as string);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}
