import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { StoreError } from '../errors.js';
import { migrate } from './migrations.js';

/** One shop's snapshot store: an open SQLite connection and the file it belongs to. */
export interface Store {
  readonly db: Database.Database;
  readonly path: string;
  close(): void;
}

/** Long enough to wait out another process's page commit, short enough to report a stuck writer. */
const BUSY_TIMEOUT_MS = 10_000;

/** Opens (creating if needed) the store file and brings its schema up to date. */
export function openStore(file: string): Store {
  let db: Database.Database | undefined;
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    db = new Database(file);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    migrate(db);
  } catch (error) {
    db?.close();
    throw storeError(`Cannot open store ${file}`, file, error);
  }
  const opened = db;
  return Object.freeze({
    db: opened,
    path: file,
    close: () => {
      if (opened.open) opened.close();
    },
  });
}

/** A StoreError whose one sentence names the file and the underlying cause (SQLite or the OS). */
export function storeError(what: string, file: string, cause: unknown): StoreError {
  if (cause instanceof StoreError) return cause;
  const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
  const code = (cause as { code?: unknown }).code;
  const busy = code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
  return new StoreError(`${what}: ${reason}.`, file, busy, { cause });
}
