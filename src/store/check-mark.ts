import { type BigIntStats, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The store check's memory, `inventory.sqlite.checked` beside the store: the store file's identity as a
 * complete sync left it, closed cleanly after its check passed, and when the file was last checked in
 * full. A sync skips the check only when the file is still exactly that file (see `takeCheckMark`).
 */
export interface CheckMark {
  readonly dev: string;
  readonly ino: string;
  readonly size: string;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
  /** When the last full check began: what was checked then, and what this process wrote after it. */
  readonly checkedAt: string;
}

/**
 * What a sync does about the store check (nothing to check in a new store, skip it, or check in full),
 * why, and the time of the last full check that the mark it leaves will carry.
 */
export interface CheckPlan {
  readonly kind: 'none' | 'skip' | 'full';
  readonly checkedAt: Date;
  readonly reason: string;
}

/** However still a file is, it is checked in full this often: silent media damage changes no stat. */
export const FULL_CHECK_EVERY_MS = 24 * 60 * 60 * 1000;

/** How long `markChecked` waits for the file system's clock to pass the store's last write. */
const CLOCK_WAIT_MS = 2_000;
const CLOCK_STEP_MS = 2;

export function checkMarkPath(store: string): string {
  return `${store}.checked`;
}

/**
 * Decides the check of a sync about to open `store`, and removes the mark first: whatever the sync then
 * writes, a crash cannot leave the file marked as checked. A store that does not exist yet (nor its WAL)
 * holds nothing to check. Any difference from the mark (another writer, a restored backup, bytes written
 * by hand), a WAL with content (a crash, or a connection still open), or a last full check a day old
 * means a full check.
 */
export function takeCheckMark(store: string, now: Date = new Date()): CheckPlan {
  const mark = readMark(store);
  removeIfThere(checkMarkPath(store));
  const file = statOrNull(store);
  const wal = statOrNull(`${store}-wal`);
  if (file === null && wal === null) return { kind: 'none', checkedAt: now, reason: 'a new store' };
  const full = (reason: string): CheckPlan => ({ kind: 'full', checkedAt: now, reason });
  if (mark === null) return full('no mark of a checked store');
  if (wal !== null && wal.size > 0n) return full('its WAL holds writes');
  if (file === null || !sameFile(identity(file), mark)) return full('the file changed since it was checked');
  const checkedAt = new Date(mark.checkedAt);
  const age = now.getTime() - checkedAt.getTime();
  if (!(age >= 0 && age < FULL_CHECK_EVERY_MS)) return full('its last full check is a day old');
  return { kind: 'skip', checkedAt, reason: 'the file is as the last checked sync left it' };
}

/**
 * Marks `store`, just closed by a complete sync whose check passed, as checked at `checkedAt`. Returns
 * false, leaving no mark, when the file cannot be described exactly: a WAL with content (another
 * connection is open), or a last write the file system's clock has not yet moved past.
 */
export async function markChecked(store: string, checkedAt: Date): Promise<boolean> {
  const markFile = checkMarkPath(store);
  const temp = `${markFile}.${process.pid}.tmp`;
  const waitUntil = Date.now() + CLOCK_WAIT_MS;
  try {
    for (;;) {
      // A write in the same tick of the file system's clock as the stat would keep mtime and ctime: the
      // file is described only once a file written after it has a later time than its own last write.
      writeFileSync(temp, '');
      const clock = statSync(temp, { bigint: true }).mtimeNs;
      const file = statSync(store, { bigint: true });
      const wal = statOrNull(`${store}-wal`);
      if (wal !== null && wal.size > 0n) return false;
      if (file.mtimeNs < clock && file.ctimeNs < clock) {
        const mark: CheckMark = { ...identity(file), checkedAt: checkedAt.toISOString() };
        writeFileSync(temp, `${JSON.stringify(mark)}\n`);
        renameSync(temp, markFile);
        return true;
      }
      if (Date.now() > waitUntil) return false;
      await sleep(CLOCK_STEP_MS);
    }
  } finally {
    removeIfThere(temp);
  }
}

function identity(file: BigIntStats): Omit<CheckMark, 'checkedAt'> {
  return {
    dev: String(file.dev),
    ino: String(file.ino),
    size: String(file.size),
    mtimeNs: String(file.mtimeNs),
    ctimeNs: String(file.ctimeNs),
  };
}

function sameFile(now: Omit<CheckMark, 'checkedAt'>, mark: CheckMark): boolean {
  return (
    now.dev === mark.dev &&
    now.ino === mark.ino &&
    now.size === mark.size &&
    now.mtimeNs === mark.mtimeNs &&
    now.ctimeNs === mark.ctimeNs
  );
}

/** The mark, or null when there is none or it is not one (a torn write, a hand edit): then nothing is skipped. */
function readMark(store: string): CheckMark | null {
  let text: string;
  try {
    text = readFileSync(checkMarkPath(store), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const mark = JSON.parse(text) as Partial<Record<keyof CheckMark, unknown>>;
    const fields = ['dev', 'ino', 'size', 'mtimeNs', 'ctimeNs', 'checkedAt'] as const;
    return fields.every((field) => typeof mark[field] === 'string') ? (mark as CheckMark) : null;
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}

function removeIfThere(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function statOrNull(file: string): BigIntStats | null {
  return statSync(file, { bigint: true, throwIfNoEntry: false }) ?? null;
}
