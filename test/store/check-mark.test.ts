import {
  closeSync,
  copyFileSync,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type CheckMark,
  checkMarkPath,
  FULL_CHECK_EVERY_MS,
  markChecked,
  takeCheckMark,
} from '../../src/store/check-mark.js';
import { openStore } from '../../src/store/open.js';
import { commitItems, makeItem, tempDir } from './fixtures.js';

let temp: ReturnType<typeof tempDir>;
let file: string;

beforeEach(async () => {
  temp = tempDir('shop-sync-mark-');
  file = path.join(temp.dir, 'shop', 'inventory.sqlite');
});
afterEach(() => temp.cleanup());

/** A store of a few items, written and closed cleanly as a sync leaves it. */
async function closedStore(): Promise<void> {
  const store = openStore(file);
  await commitItems(store, [[makeItem('a'), makeItem('b'), makeItem('c')]]);
  store.close();
}

const checkedAt = new Date('2026-11-27T12:00:00.000Z');
const anHourLater = new Date(checkedAt.getTime() + 60 * 60 * 1000);

function readMark(): CheckMark {
  return JSON.parse(readFileSync(checkMarkPath(file), 'utf8')) as CheckMark;
}

describe('the store check mark', () => {
  it('lets the next sync skip the check of a file as the last checked sync left it, once', async () => {
    await closedStore();
    expect(await markChecked(file, checkedAt)).toBe(true);
    expect(readMark()).toMatchObject({
      checkedAt: checkedAt.toISOString(),
      size: String(statSync(file).size),
    });
    expect(takeCheckMark(file, anHourLater)).toEqual({
      kind: 'skip',
      checkedAt,
      reason: 'the file is as the last checked sync left it',
    });
    // Taken: the sync that took it may write and crash, and must not leave the file marked.
    expect(existsSync(checkMarkPath(file))).toBe(false);
    expect(takeCheckMark(file, anHourLater)).toMatchObject({
      kind: 'full',
      reason: 'no mark of a checked store',
    });
  });

  it('has nothing to check in a store that does not exist yet', () => {
    expect(takeCheckMark(file, anHourLater)).toEqual({
      kind: 'none',
      checkedAt: anHourLater,
      reason: 'a new store',
    });
  });

  it('checks in full a file whose bytes were written after it was marked, however soon after', async () => {
    await closedStore();
    const size = statSync(file).size;
    // Same size, and as soon as the mark exists: where the file system's clock ticks coarsely (kernels
    // before multigrain timestamps, 6.13), the write would keep the marked mtime had the mark not waited
    // for the clock to pass the store's last write.
    for (let attempt = 0; attempt < 20; attempt++) {
      expect(await markChecked(file, checkedAt)).toBe(true);
      const fd = openSync(file, 'r+');
      try {
        writeSync(fd, Buffer.from([attempt]), 0, 1, size - 1);
      } finally {
        closeSync(fd);
      }
      expect(statSync(file).size).toBe(size);
      expect(takeCheckMark(file, anHourLater), `attempt ${attempt}`).toMatchObject({
        kind: 'full',
        reason: 'the file changed since it was checked',
      });
    }
  });

  it('checks in full a backup restored with its times, or another file under its name', async () => {
    await closedStore();
    const backup = path.join(temp.dir, 'backup.sqlite');
    copyFileSync(file, backup);
    const before = statSync(file);
    expect(await markChecked(file, checkedAt)).toBe(true);
    copyFileSync(backup, file);
    utimesSync(file, before.atime, before.mtime);
    expect(takeCheckMark(file, anHourLater)).toMatchObject({ kind: 'full' });

    expect(await markChecked(file, checkedAt)).toBe(true);
    renameSync(backup, file);
    expect(takeCheckMark(file, anHourLater)).toMatchObject({
      kind: 'full',
      reason: 'the file changed since it was checked',
    });
  });

  it('checks in full a store whose WAL holds writes, and leaves a store another connection writes unmarked', async () => {
    await closedStore();
    expect(await markChecked(file, checkedAt)).toBe(true);
    const writer = openStore(file);
    try {
      await commitItems(writer, [[makeItem('d')]]);
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);
      expect(takeCheckMark(file, anHourLater)).toMatchObject({
        kind: 'full',
        reason: 'its WAL holds writes',
      });
      expect(await markChecked(file, checkedAt)).toBe(false);
      expect(existsSync(checkMarkPath(file))).toBe(false);
    } finally {
      writer.close();
    }
  });

  it('checks in full again once the last full check is a day old, or in the future', async () => {
    await closedStore();
    const at = (ms: number) => new Date(checkedAt.getTime() + ms);
    for (const [now, kind] of [
      [at(FULL_CHECK_EVERY_MS - 1), 'skip'],
      [at(FULL_CHECK_EVERY_MS), 'full'],
      [at(-1), 'full'],
    ] as const) {
      expect(await markChecked(file, checkedAt)).toBe(true);
      expect(takeCheckMark(file, now).kind, now.toISOString()).toBe(kind);
    }
    expect(await markChecked(file, checkedAt)).toBe(true);
    expect(takeCheckMark(file, at(FULL_CHECK_EVERY_MS))).toMatchObject({
      reason: 'its last full check is a day old',
    });
  });

  it('checks in full when the mark is not one', async () => {
    await closedStore();
    for (const text of ['', '{"dev":', JSON.stringify({ ...readMarkAfterMarking(), checkedAt: 5 })]) {
      writeFileSync(checkMarkPath(file), text);
      expect(takeCheckMark(file, anHourLater), text).toMatchObject({
        kind: 'full',
        reason: 'no mark of a checked store',
      });
    }
  });
});

/** What a mark of the current file holds, without waiting for a clock: only its shape matters here. */
function readMarkAfterMarking(): Omit<CheckMark, 'checkedAt'> {
  const stat = statSync(file, { bigint: true });
  return {
    dev: String(stat.dev),
    ino: String(stat.ino),
    size: String(stat.size),
    mtimeNs: String(stat.mtimeNs),
    ctimeNs: String(stat.ctimeNs),
  };
}
