import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { StoreCorruptError, StoreError } from '../errors.js';
import { migrate } from './migrations.js';

/** One shop's snapshot store: an open SQLite connection and the file it belongs to. */
export interface Store {
  readonly db: Database.Database;
  readonly path: string;
  close(): void;
}

/** Long enough to wait out another process's page commit, short enough to report a stuck writer. */
const BUSY_TIMEOUT_MS = 10_000;

/**
 * What the WAL is truncated to after a checkpoint: no transaction spans the shop, so the automatic
 * checkpoints keep it near `WAL_AUTOCHECKPOINT_PAGES` during a long sync.
 */
const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Pages in the WAL before a commit checkpoints it (16 MB of 4 KB pages; SQLite's default is 1,000).
 * Staging rewrites the same index pages batch after batch: fewer checkpoints copy each of them to the
 * database fewer times, which took a quarter of the first sync's staging time at 100,000 items, while
 * the WAL stays near 20 MB.
 */
const WAL_AUTOCHECKPOINT_PAGES = 4000;

/**
 * Page cache per connection (SQLite's default is 2 MB): the index pages a sync touches on every batch
 * (100,000 items' item_versions_id is 3.4 MB) stay in memory instead of being read again from the OS,
 * which halved the system time of staging. It costs at most this much RSS.
 */
const CACHE_SIZE_KIB = 16 * 1024;

export interface OpenOptions {
  /** How long to wait for another process's lock before saying the store is locked. */
  readonly busyTimeoutMs?: number;
}

/**
 * Opens (creating if needed) the store file and brings its schema up to date. A sync creates a new
 * store before, off the event loop (`createStoreFile`); created here, SQLite's switch of the new file to
 * WAL costs four fsyncs on it.
 */
export function openStore(file: string, options: OpenOptions = {}): Store {
  let db: Database.Database | undefined;
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    db = new Database(file);
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    db.pragma(`cache_size = -${CACHE_SIZE_KIB}`);
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

/**
 * A StoreError whose one sentence names the file and the cause: another process holding it locked
 * (retryable: code STORE_LOCKED), a damaged file (StoreCorruptError, saying how to recover), a folder
 * that cannot be written, or what SQLite or the OS said.
 */
export function storeError(what: string, file: string, cause: unknown): StoreError {
  if (cause instanceof StoreError) return cause;
  const message = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
  const code = String((cause as { code?: unknown } | null)?.code ?? '');
  if (isCorruption(code))
    return new StoreCorruptError(
      `${what}: it is corrupt (${message}). ${recoveryAdvice(file)}`,
      file,
      false,
      {
        cause,
      },
    );
  // SQLite says only "disk I/O error" for every failed read, write or sync: its extended code says which.
  const reason = code.startsWith('SQLITE_IOERR') ? `${message}, ${code}` : message;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
    return new StoreError(`${what}: another process holds it locked (${reason}).`, file, true, { cause });
  const readOnly = READ_ONLY_CODES.some((prefix) => code.startsWith(prefix)) ? readOnlyFolder(file) : null;
  if (readOnly !== null)
    return new StoreError(`${what}: the folder ${readOnly} is read-only (${reason}).`, file, false, {
      cause,
    });
  return new StoreError(`${what}: ${reason}.`, file, false, { cause });
}

/** SQLite's codes for a file that is damaged or not a database at all. */
export function isCorruption(code: string): boolean {
  return code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB';
}

/** An error SQLite raised (its code starts with `SQLITE_`). */
export function isSqliteError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_');
}

/** An error in which SQLite reports a damaged file. */
export function isCorruptionError(error: unknown): boolean {
  return isSqliteError(error) && isCorruption(String((error as { code: string }).code));
}

/** `error` as a StoreError naming `file` when SQLite raised it; any other error as it is. */
export function fromSqlite(what: string, file: string, error: unknown): unknown {
  return isSqliteError(error) ? storeError(what, file, error) : error;
}

/**
 * What to do about a corrupt store. Nothing in it can be trusted, so the only way on is a new one; the
 * feeds stay as last published, since a sync that finds the damage fails before it writes them.
 */
export function recoveryAdvice(file: string): string {
  return `Move it aside (with its -wal and -shm files, if any), for example to ${path.basename(file)}.corrupt: the next sync starts a new history, and the feeds stay as last published until then.`;
}

/** Failures that a folder without write permission (or a read-only file system) causes. */
const READ_ONLY_CODES = ['SQLITE_READONLY', 'SQLITE_CANTOPEN', 'SQLITE_IOERR', 'EACCES', 'EPERM', 'EROFS'];

/** The nearest existing folder of `file` when it cannot be written; null when it can. */
function readOnlyFolder(file: string): string | null {
  let folder = path.dirname(file);
  while (!existsSync(folder) && path.dirname(folder) !== folder) folder = path.dirname(folder);
  try {
    accessSync(folder, constants.W_OK);
    return null;
  } catch {
    return folder;
  }
}
