import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readlink, rename, rm, rmdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { StoreError } from '../../errors.js';
import { fsyncPath } from '../../fsync-path.js';
import type { ShopPaths } from '../../store/paths.js';
import { describeCause } from './cause.js';

/**
 * The feeds are published as one directory: `DATA_DIR/<shop>/feeds` is a symbolic link to a hidden
 * directory beside it (`.feeds-<run>-<random>`) that holds the three feeds of one run. A new set is
 * written into a fresh directory, flushed, and the link is replaced by a rename, which is atomic: a
 * reader of `feeds/inventory.csv` finds the old set or the new one, never a mix, whenever the
 * process dies. Readers keep using the same paths.
 */

/** Our published directories; anything else in the shop's directory is never touched. */
const OWN_DIR = /^\.feeds-\d+-[0-9a-f]{8}$/;
const LEGACY_DIR = /^\.feeds-legacy-[0-9a-f]{8}$/;
const LINK_TEMP = /^\.feeds-link-[0-9a-f]{8}\.tmp$/;

/** What stands at the `feeds` path now. */
export type FeedsPath =
  | { readonly kind: 'none' }
  | { readonly kind: 'link'; readonly target: string }
  /** A real directory: a store from before feeds were published as a directory. */
  | { readonly kind: 'directory' };

/** What is at `paths.feedsDir`; a file there is refused with a message saying so. */
export async function inspectFeedsPath(paths: ShopPaths): Promise<FeedsPath> {
  const found = await lstat(paths.feedsDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw feedsError(paths, error);
  });
  if (found === null) return { kind: 'none' };
  if (found.isSymbolicLink()) return { kind: 'link', target: await readlink(paths.feedsDir) };
  if (found.isDirectory()) return { kind: 'directory' };
  throw new StoreError(
    `Cannot write the feeds of shop ${shopOf(paths)}: ${paths.feedsDir} is a file where a directory is needed.`,
    paths.feedsDir,
  );
}

/** Creates the fresh, empty directory the next set of feeds is written into. */
export async function createFeedsDir(paths: ShopPaths, run: number): Promise<string> {
  const dir = path.join(paths.dir, `.feeds-${run}-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(dir, { recursive: false });
  } catch (error) {
    throw feedsError(paths, error);
  }
  return dir;
}

/**
 * Points `feeds` at `dir` with one atomic rename, flushes the shop's directory so the switch survives
 * a crash, then removes the directory it replaced. A store whose `feeds` is still a real directory is
 * upgraded: that directory is moved aside first (the one moment `feeds` is briefly absent, once).
 */
export async function switchFeeds(paths: ShopPaths, current: FeedsPath, dir: string): Promise<void> {
  const link = path.join(paths.dir, `.feeds-link-${randomBytes(4).toString('hex')}.tmp`);
  let legacy: string | null = null;
  try {
    await symlink(path.basename(dir), link);
    if (current.kind === 'directory') {
      legacy = path.join(paths.dir, `.feeds-legacy-${randomBytes(4).toString('hex')}`);
      await rename(paths.feedsDir, legacy);
    }
    await rename(link, paths.feedsDir);
    await fsyncPath(paths.dir);
  } catch (error) {
    await rm(link, { force: true });
    // The old feeds go back where readers look for them.
    if (legacy !== null && (await inspectFeedsPath(paths)).kind === 'none')
      await rename(legacy, paths.feedsDir);
    throw feedsError(paths, error);
  }
}

/**
 * Removes every published directory but the one `feeds` points at, and what killed writers left.
 * A moved-aside legacy directory loses its feed files; anything else a user put there stays.
 * Only for the shop's one writer (the caller holds the lease).
 */
export async function removeOldFeedDirs(paths: ShopPaths, feedNames: readonly string[]): Promise<void> {
  const current = await inspectFeedsPath(paths);
  const keep = current.kind === 'link' ? path.basename(current.target) : null;
  const names = await readdir(paths.dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw feedsError(paths, error);
  });
  for (const name of names) {
    if (name === keep) continue;
    const entry = path.join(paths.dir, name);
    if (OWN_DIR.test(name) || LINK_TEMP.test(name)) await rm(entry, { recursive: true, force: true });
    else if (LEGACY_DIR.test(name)) await emptyLegacyDir(entry, feedNames);
  }
}

async function emptyLegacyDir(dir: string, feedNames: readonly string[]): Promise<void> {
  const names = await readdir(dir);
  const ours = names.filter((name) => feedNames.includes(name) || isTempFeed(name, feedNames));
  await Promise.all(ours.map((name) => rm(path.join(dir, name), { force: true })));
  if (ours.length === names.length) await rmdir(dir);
}

/** Temporary files of the per-file writer that came before directories: `.inventory.csv.<pid>.<hex>.tmp`. */
function isTempFeed(name: string, feedNames: readonly string[]): boolean {
  return name.endsWith('.tmp') && feedNames.some((feed) => name.startsWith(`.${feed}.`));
}

function feedsError(paths: ShopPaths, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  return new StoreError(
    `Cannot write the feeds of shop ${shopOf(paths)} in ${paths.dir}: ${describeCause(error)}`,
    paths.feedsDir,
    false,
    { cause: error },
  );
}

function shopOf(paths: ShopPaths): string {
  return path.basename(paths.dir);
}
