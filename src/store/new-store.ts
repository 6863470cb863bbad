import { randomBytes } from 'node:crypto';
import { link, mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { fsyncPath } from '../fsync-path.js';
import { currentSchema, SCHEMA_VERSION } from './migrations.js';
import { storeError } from './open.js';

/** Bytes 18 and 19 of a database file's header: its write and read format versions, 2 for WAL. */
const FORMAT_VERSION_OFFSETS = [18, 19] as const;
const WAL_FORMAT = 2;

/** What `link` answers when it will not link here: the name is taken, or hard links are not supported. */
const LINK_REFUSED = ['EEXIST', 'EPERM', 'ENOTSUP'];

let image: Buffer | undefined;

/**
 * The file of an empty store of the current schema, already in WAL mode: built once per process in
 * memory and serialized, with the header's format versions set to WAL's (as `journal_mode = WAL` would
 * write them). Written whole, a new store costs no SQL and two fsyncs off the event loop, where SQLite
 * creating it in place took four on the event loop for the header's switch to WAL alone.
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
 * Creates the store `file` (which does not exist) as an empty store of the current schema, off the
 * event loop: written beside it, flushed, linked under its name (never over a file another process
 * created meanwhile: that one is kept) and its folder flushed, so a crash leaves no store or a whole
 * one. `openStore` then finds it up to date. Fails as `openStore` would, naming the file.
 */
export async function createStoreFile(file: string): Promise<void> {
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeBeside(file, emptyStoreImage());
    await fsyncPath(path.dirname(file));
  } catch (error) {
    throw storeError(`Cannot open store ${file}`, file, error);
  }
}

/**
 * Writes `bytes` to a new file beside `file`, flushes it and links it as `file` unless that exists or
 * cannot be linked.
 */
async function writeBeside(file: string, bytes: Buffer): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  const handle = await open(temp, 'wx');
  try {
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temp, file).catch((error: NodeJS.ErrnoException) => {
      // EEXIST: created meanwhile, kept. A file system without hard links (as write-feeds.ts meets
      // too): openStore creates the store in place instead.
      if (!LINK_REFUSED.includes(String(error.code))) throw error;
    });
  } finally {
    await rm(temp, { force: true });
  }
}
