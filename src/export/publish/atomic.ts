import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { ShopSyncError, StoreError } from '../../errors.js';
import { fsyncPath } from '../../fsync-path.js';
import { isCorruptionError } from '../../store/open.js';
import { describeCause } from './cause.js';

/**
 * Files are replaced atomically: written to a temporary file beside the target (same directory, so
 * the same file system), flushed to disk, renamed over the target, and the directory flushed so the
 * rename itself survives a crash. A reader sees the old file or the new one, never half of one.
 */

/** A fully written and flushed temporary file, waiting to be renamed over its target. */
export interface PreparedFile {
  readonly target: string;
  readonly temp: string;
  /** How error messages name the file, e.g. "feed". */
  readonly label: string | undefined;
}

export interface AtomicOptions {
  /** A word for error messages: "Cannot write feed /x/inventory.csv: ...". */
  readonly label?: string;
}

/** Writes `target` atomically with whatever `write` streams into the given stream. */
export async function writeFileAtomic(
  target: string,
  write: (out: NodeJS.WritableStream) => Promise<void>,
  options: AtomicOptions = {},
): Promise<void> {
  await commitFiles([await prepareStream(target, write, options)]);
}

/** Streams into a temporary file beside `target` and flushes it; nothing replaces `target` yet. */
export function prepareStream(
  target: string,
  write: (out: NodeJS.WritableStream) => Promise<void>,
  options: AtomicOptions = {},
): Promise<PreparedFile> {
  return prepareFile(target, (temp) => streamInto(temp, write), options);
}

/**
 * Creates `file` (it must not exist) and streams `write`'s output into it, closed once written; a
 * failed write destroys the stream and waits for it to close before the error is passed on.
 */
export async function streamInto(
  file: string,
  write: (out: NodeJS.WritableStream) => Promise<void>,
): Promise<void> {
  const out = createWriteStream(file, { flags: 'wx' });
  const closed = finished(out);
  try {
    await write(out);
    out.end();
  } catch (error) {
    out.destroy();
    await closed.catch(() => undefined);
    throw error;
  }
  await closed;
}

/**
 * Lets `build` create a temporary file beside `target` (for writers that need a path, like SQLite),
 * then flushes it. On failure the temporary file is removed and a StoreError names `target`.
 */
export async function prepareFile(
  target: string,
  build: (temp: string) => Promise<void>,
  options: AtomicOptions = {},
): Promise<PreparedFile> {
  const prepared: PreparedFile = { target, temp: tempPathFor(target), label: options.label };
  try {
    await mkdir(path.dirname(target), { recursive: true });
    await build(prepared.temp);
    await fsyncPath(prepared.temp);
    return prepared;
  } catch (error) {
    await discardFiles([prepared]);
    throw writeError(prepared, error);
  }
}

/**
 * Renames every prepared file over its target, then flushes their directories. Targets are checked
 * first (a directory in the way is the one way a rename beside the target fails), so a set of files
 * is replaced together or not at all, as far as a file system without multi-file transactions allows.
 * Whatever is not renamed is removed.
 */
export async function commitFiles(files: readonly PreparedFile[]): Promise<void> {
  try {
    for (const file of files) await refuseDirectory(file);
    for (const file of files) await renameInto(file);
    for (const dir of new Set(files.map((f) => path.dirname(f.target)))) await fsyncPath(dir);
  } finally {
    await discardFiles(files);
  }
}

/** Removes the temporary files of prepared files that will not be committed. */
export async function discardFiles(files: readonly PreparedFile[]): Promise<void> {
  await Promise.all(files.map((f) => rm(f.temp).catch(unlessNeverCreated)));
}

/** A file never created (its directory could not be made) or already renamed is not there: nothing to do. */
function unlessNeverCreated(error: NodeJS.ErrnoException): undefined {
  if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') throw error;
}

async function refuseDirectory(file: PreparedFile): Promise<void> {
  const existing = await stat(file.target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw writeError(file, error);
  });
  if (existing?.isDirectory()) {
    throw writeError(
      file,
      Object.assign(new Error('EISDIR: illegal operation on a directory'), { code: 'EISDIR' }),
    );
  }
}

async function renameInto(file: PreparedFile): Promise<void> {
  try {
    await rename(file.temp, file.target);
  } catch (error) {
    throw writeError(file, error);
  }
}

/** Hidden, unique per process and attempt, and in the target's directory so the rename is atomic. */
function tempPathFor(target: string): string {
  const suffix = `${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  return path.join(path.dirname(target), `.${path.basename(target)}.${suffix}`);
}

function writeError(file: PreparedFile, error: unknown): unknown {
  if (error instanceof ShopSyncError) return error;
  // Damage is found in a file being read (the store), never in the one being written: the command that
  // opened the store names it and says how to recover.
  if (isCorruptionError(error)) return error;
  const what = file.label ? `${file.label} ${file.target}` : file.target;
  return new StoreError(`Cannot write ${what}: ${describeCause(error)}`, file.target, false, {
    cause: error,
  });
}
