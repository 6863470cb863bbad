import { existsSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { checkMarkPath } from '../../src/store/check-mark.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli } from '../helpers/cli.js';
import { corruptMiddlePage, simEnv, tempDir } from '../store/fixtures.js';

/**
 * A store whose header is intact but whose pages are damaged further in: a sync must not build on it
 * (nor replace the feeds from it), `check` must find it, and every message says how to recover.
 */
let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let store: string;

beforeAll(async () => {
  sim = await startSimulator({ items: 400, seed: 23 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-corrupt-');
  env = { ...simEnv(sim, temp.dir), SYNC_PER_PAGE: '50' };
  store = shopPaths(temp.dir, 'shop').store;
});
afterEach(() => temp.cleanup());

const cli = (...args: string[]) => runCli(args, env);

/** The published feeds, byte for byte, and where the feeds link points. */
function feedsNow(): Record<string, string> {
  const paths = shopPaths(temp.dir, 'shop');
  return {
    inventory: readFileSync(paths.inventoryCsv, 'utf8'),
    changes: readFileSync(path.join(paths.feedsDir, 'changes.csv'), 'utf8'),
    snapshot: readFileSync(path.join(paths.feedsDir, 'snapshot.sqlite')).toString('base64'),
  };
}

const RECOVERY =
  /Move it aside \(with its -wal and -shm files, if any\), for example to inventory\.sqlite\.corrupt: the next sync starts a new history, and the feeds stay as last published until then\.\n$/;

describe('a store corrupt in the middle', () => {
  it('fails the sync with exit 1 and how to recover, leaving the feeds; check finds it; moved aside, the next sync starts anew', async () => {
    expect((await cli('sync')).code).toBe(0);
    sim.mutate({ prices: 5, add: 2, remove: 2 });
    expect((await cli('sync')).code).toBe(0);
    const feeds = feedsNow();
    const runsBefore = JSON.parse((await cli('runs', '--json')).stdout);
    // The last sync marked the file as checked: the damage changes it, so the next sync checks it in full.
    expect(existsSync(checkMarkPath(store))).toBe(true);
    corruptMiddlePage(store, 'item_versions');

    sim.mutate({ prices: 3 });
    const sync = await cli('sync');
    expect(sync.code).toBe(1);
    expect(sync.stdout).toBe('');
    expect(sync.stderr.split('\n'), sync.stderr).toHaveLength(2);
    expect(sync.stderr).toMatch(
      new RegExp(`^shop-sync: (The store ${store} is corrupt|Cannot \\w+ store ${store}: it is corrupt)`),
    );
    expect(sync.stderr).toMatch(RECOVERY);
    expect(feedsNow()).toEqual(feeds);
    // At the default level no log line carries a stack trace; LOG_LEVEL=debug shows them.
    const logged = await runCli(['sync'], { ...env, LOG_LEVEL: 'info' });
    expect(logged.code).toBe(1);
    expect(logged.stderr).toMatch(RECOVERY);
    expect(logged.stderr).not.toMatch(/"stack"|\n\s+at \S/);
    const debug = await runCli(['sync'], { ...env, LOG_LEVEL: 'debug' });
    expect(debug.stderr).toMatch(/\n\s+at \S/);
    expect(feedsNow()).toEqual(feeds);

    const check = await cli('check', '--json');
    expect(check.code).toBe(1);
    const result = JSON.parse(check.stdout);
    expect(result).toMatchObject({ shop: 'shop', ok: false, store: 'corrupt' });
    expect(result.error).toMatch(
      new RegExp(`^The store ${store} is corrupt \\(SQLite's quick_check: .+\\)\\. Move it aside`),
    );
    const checkText = await cli('check');
    // The error once, on stderr: stdout does not repeat it.
    expect(checkText.stdout).toBe('');
    expect(checkText.stderr).toMatch(new RegExp(`^shop-sync: The store ${store} is corrupt`));
    expect(checkText.stderr).toMatch(RECOVERY);
    expect(checkText.stderr.split('is corrupt').length).toBe(2);

    // The runs the damage did not reach are still listed as they were.
    const runsAfter = JSON.parse((await cli('runs', '--json')).stdout);
    expect(runsAfter.slice(0, 2)).toEqual(runsBefore);

    for (const suffix of ['', '-wal', '-shm'])
      if (existsSync(store + suffix)) renameSync(store + suffix, `${store}.corrupt${suffix}`);
    const fresh = await cli('sync', '--json');
    expect([fresh.code, fresh.stderr]).toEqual([0, '']);
    expect(JSON.parse(fresh.stdout)).toMatchObject({ run: 1, status: 'complete', items: sim.truth().length });
    expect((await cli('check')).stdout).toMatch(/^Shop shop: OK: .*; the store is intact\.\n$/);
  });

  it('says how to recover when SQLite reports the damage itself, in every command that reads the store', async () => {
    expect((await cli('sync')).code).toBe(0);
    sim.mutate({ prices: 5 });
    expect((await cli('sync')).code).toBe(0);
    const feeds = feedsNow();
    corruptMiddlePage(store, 'item_versions');
    const out = path.join(temp.dir, 'run-2.csv');
    for (const args of [
      ['export', '--run', '1'],
      ['export', '--out', out],
    ]) {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`^shop-sync: Cannot read store ${store}: it is corrupt \\(`));
      expect(result.stderr).toMatch(RECOVERY);
    }
    expect(feedsNow()).toEqual(feeds);
  });
});
