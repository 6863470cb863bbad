import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/errors.js';
import {
  createFeedsDir,
  inspectFeedsPath,
  removeOldFeedDirs,
  switchFeeds,
} from '../../../src/export/publish/feeds-dir.js';
import { type ShopPaths, shopPaths } from '../../../src/store/paths.js';
import { tempDir } from '../../store/fixtures.js';

let temp: ReturnType<typeof tempDir>;
let paths: ShopPaths;
beforeEach(() => {
  temp = tempDir('shop-sync-feeds-dir-');
  paths = shopPaths(temp.dir, 'north');
  mkdirSync(paths.dir);
});
afterEach(() => temp.cleanup());

const FEEDS = ['inventory.csv', 'changes.csv', 'snapshot.sqlite'];

/** Publishes a directory holding one file that names `run`, as writeFeeds does. */
async function publish(run: number): Promise<string> {
  const current = await inspectFeedsPath(paths);
  const dir = await createFeedsDir(paths, run);
  writeFileSync(path.join(dir, 'inventory.csv'), `run ${run}\n`);
  await switchFeeds(paths, current, dir);
  await removeOldFeedDirs(paths, FEEDS);
  return dir;
}

const hidden = () => readdirSync(paths.dir).filter((name) => name.startsWith('.'));

describe('the feeds directory', () => {
  it('points feeds at the latest published directory and keeps no other', async () => {
    expect(await inspectFeedsPath(paths)).toEqual({ kind: 'none' });
    await publish(1);
    const second = await publish(2);

    expect(await inspectFeedsPath(paths)).toEqual({ kind: 'link', target: path.basename(second) });
    expect(readlinkSync(paths.feedsDir)).toMatch(/^\.feeds-2-[0-9a-f]{8}$/);
    expect(readFileSync(paths.inventoryCsv, 'utf8')).toBe('run 2\n');
    expect(hidden()).toEqual([path.basename(second)]);
  });

  it('leaves the published feeds alone while a new directory is only being written', async () => {
    await publish(1);
    const pending = await createFeedsDir(paths, 2);
    writeFileSync(path.join(pending, 'inventory.csv'), 'half');
    expect(readFileSync(paths.inventoryCsv, 'utf8')).toBe('run 1\n');
    // A writer killed here leaves `pending`; the next one removes it.
    await publish(3);
    expect(hidden()).toHaveLength(1);
    expect(readFileSync(paths.inventoryCsv, 'utf8')).toBe('run 3\n');
  });

  it('upgrades a real feeds directory, keeping what is not a feed', async () => {
    mkdirSync(paths.feedsDir);
    writeFileSync(paths.inventoryCsv, 'old');
    writeFileSync(path.join(paths.feedsDir, 'README.txt'), 'mine');
    expect(await inspectFeedsPath(paths)).toEqual({ kind: 'directory' });

    await publish(1);
    expect(lstatSync(paths.feedsDir).isSymbolicLink()).toBe(true);
    const legacy = hidden().find((name) => name.startsWith('.feeds-legacy-')) as string;
    expect(readdirSync(path.join(paths.dir, legacy))).toEqual(['README.txt']);

    await publish(2);
    expect(hidden().filter((name) => name.startsWith('.feeds-legacy-'))).toEqual([legacy]);
  });

  it('refuses a feeds path that is a file, naming it', async () => {
    writeFileSync(paths.feedsDir, 'x');
    const error = await inspectFeedsPath(paths).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toBe(
      `Cannot write the feeds of shop north: ${paths.feedsDir} is a file where a directory is needed.`,
    );
  });

  it('names the shop directory and the cause when the new directory cannot be made', async () => {
    await expect(createFeedsDir(shopPaths(path.join(temp.dir, 'missing'), 'south'), 1)).rejects.toThrow(
      `Cannot write the feeds of shop south in ${path.join(temp.dir, 'missing', 'south')}: ENOENT no such file or directory`,
    );
  });
});
