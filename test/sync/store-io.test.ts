import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppConfig } from '../../src/config/app-config.js';
import { findShop } from '../../src/config/app-config.js';
import { StoreError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/open.js';
import { shopPaths } from '../../src/store/paths.js';
import { latestCompleteRun, listRuns } from '../../src/store/run-records.js';
import { runSync, type SyncPoint } from '../../src/sync/index.js';
import { simConfig, tempDir } from '../store/fixtures.js';

/**
 * A disk that fails under a sync: from a sync point on, every write SQLite makes to the store's WAL
 * fails as a real I/O error (its descriptor now refers to /dev/null opened read-only), including the
 * release of the lease. The failure must name the file and the cause, and what was committed before stays.
 */
let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let config: AppConfig;

beforeAll(async () => {
  sim = await startSimulator({ items: 200, seed: 31 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-io-');
  config = simConfig(sim, temp.dir, { SYNC_PER_PAGE: '25' });
});
afterEach(() => temp.cleanup());

const sync = (onPoint?: (point: SyncPoint) => void) =>
  runSync(findShop(config, 'shop'), { config, log: silentLogger(), onPoint });

/**
 * Swaps every descriptor this process holds on `file`'s WAL (the store's connection and the feeds'
 * reader may both hold one) for /dev/null opened read-only, at the same number: SQLite's next write
 * there fails with EBADF. A new descriptor takes the lowest free one, so the free ones below are
 * filled, then freed again, until each of the WAL's numbers is /dev/null.
 */
function breakWal(file: string): number {
  const wal = `${realpathSync(file)}-wal`;
  const walFds = readdirSync('/proc/self/fd')
    .filter((entry) => {
      try {
        return readlinkSync(`/proc/self/fd/${entry}`) === wal;
      } catch {
        // The descriptor that listed the folder is gone by now: nothing of SQLite's.
        return false;
      }
    })
    .map(Number);
  for (const fd of walFds) closeSync(fd);
  const last = Math.max(...walFds);
  const below: number[] = [];
  let replaced = 0;
  while (replaced < walFds.length) {
    const fd = openSync('/dev/null', 'r');
    if (fd > last) throw new Error(`a WAL descriptor was reused before /dev/null took it`);
    if (walFds.includes(fd)) replaced += 1;
    else below.push(fd);
  }
  for (const fd of below) closeSync(fd);
  return replaced;
}

const failAt = (at: SyncPoint, file: string) => (point: SyncPoint) => {
  if (point === at) expect(breakWal(file)).toBeGreaterThan(0);
};

const IO_ERROR = (file: string) =>
  new RegExp(
    `^Cannot \\w+ store ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: disk I/O error, SQLITE_IOERR\\w*\\.$`,
  );

describe('a disk I/O error under a sync', () => {
  it('after the feeds are published (then also releasing the lease): a StoreError naming the file and the cause', async () => {
    const file = shopPaths(temp.dir, 'shop').store;
    const error = await sync(failAt('published', file)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toMatch(IO_ERROR(file));
    expect((error as StoreError).path).toBe(file);
    const store = openStore(file);
    try {
      expect(latestCompleteRun(store)).toBe(1);
    } finally {
      store.close();
    }
  });

  it('before the commit: a StoreError naming the file, the previous run still the latest, the feeds untouched', async () => {
    const file = shopPaths(temp.dir, 'shop').store;
    await sync();
    const feed = readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv, 'utf8');
    sim.mutate({ prices: 4, remove: 2 });
    const error = await sync(failAt('removals-confirmed', file)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toMatch(IO_ERROR(file));
    expect(readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv, 'utf8')).toBe(feed);
    const store = openStore(file);
    try {
      expect(latestCompleteRun(store)).toBe(1);
      expect(listRuns(store).map((r) => r.status)).toEqual(['complete', 'running']);
    } finally {
      store.close();
    }
  });
});
