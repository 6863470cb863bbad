import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { currentSchema, SCHEMA_VERSION } from './migrations.js';

/** Bytes 18 and 19 of a database file's header: its write and read format versions, 2 for WAL. */
const FORMAT_VERSION_OFFSETS = [18, 19] as const;
const WAL_FORMAT = 2;

let image: Buffer | undefined;

/**
 * The file of an empty store of the current schema, already in WAL mode: built once per process in
 * memory and serialized, with the header's format versions set to WAL's (as `journal_mode = WAL` would
 * write them). Written whole, a new store costs two fsyncs and no SQL, where SQLite creating it in
 * place took four for the header's switch to WAL alone, on the event loop.
 */
function emptyStoreImage(): Buffer {
  if (image === undefined) {
    const memory = new Database(':memory:');
    try {
      memory.exec(currentSchema());
      memory.pragma(`user_version = ${SCHEMA_VERSION}`);
      image = memory.serialize();
    } finally {
      memory.close();
    }
    for (const offset of FORMAT_VERSION_OFFSETS) image[offset] = WAL_FORMAT;
  }
  return image;
}

/**
 * Creates the store `file` (which does not exist) as an empty store of the current schema: written
 * beside it, flushed, linked under its name (never over a file another process created meanwhile:
 * then that one is kept) and its folder flushed, so a crash leaves no store or a whole one.
 */
export function createStoreFile(file: string): void {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  const fd = openSync(temp, 'wx');
  try {
    try {
      writeSync(fd, emptyStoreImage());
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(temp, { force: true });
  }
  fsyncFolder(path.dirname(file));
}

function fsyncFolder(folder: string): void {
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
