import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findShop } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/log.js';
import { type SimItem, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/open.js';
import { shopPaths } from '../../src/store/paths.js';
import { beginRun, failRun } from '../../src/store/run-records.js';
import { runSync } from '../../src/sync/index.js';
import { inventoryRecord } from '../export/expected.js';
import { querySqlite, readCsvRecords } from '../export/python.js';
import { runCli } from '../helpers/cli.js';
import { simConfig, tempDir, truthById } from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let firstTruth: SimItem[];
let latestTruth: SimItem[];
let changeCount: number;
const env = () => ({ DATA_DIR: temp.dir, SHOP_NAME: 'shop', LOG_LEVEL: 'silent' });

/** Two complete runs around a mutation, then a failed third: what `export` chooses from. */
beforeAll(async () => {
  sim = await startSimulator({ items: 80, seed: 5 });
  temp = tempDir('shop-sync-export-cli-');
  const config = simConfig(sim, temp.dir);
  const sync = () => runSync(findShop(config, 'shop'), { config, log: silentLogger() });
  await sync();
  firstTruth = truthById(sim);
  const mutation = sim.mutate({ prices: 3, titles: 2, add: 2, remove: 2 });
  changeCount = mutation.added.length + mutation.removed.length + mutation.updated.length;
  await sync();
  latestTruth = truthById(sim);
  const store = openStore(shopPaths(temp.dir, 'shop').store);
  try {
    failRun(store, beginRun(store, { query: 'interrupted', resumeWindowMinutes: 0 }).run, 'killed');
  } finally {
    store.close();
  }
});
afterAll(async () => {
  await sim.close();
  temp.cleanup();
});

/** Python reads CSV from a file: keep what the command printed in one. */
function csvOf(stdout: string): Record<string, string>[] {
  const file = path.join(temp.dir, `stdout-${Math.random().toString(36).slice(2)}.csv`);
  writeFileSync(file, stdout);
  return readCsvRecords(file);
}

describe('shop-sync export', () => {
  it('prints the latest complete run as CSV', async () => {
    const result = await runCli(['export'], env());
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(csvOf(result.stdout)).toEqual(latestTruth.map(inventoryRecord));
  });

  it('exports an earlier complete run with --run, to a file with --out', async () => {
    const out = path.join(temp.dir, 'run1.csv');
    const result = await runCli(['export', '--run', '1', '--out', out], env());
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(readCsvRecords(out)).toEqual(firstTruth.map(inventoryRecord));
  });

  it('writes a self-contained SQLite file with --format sqlite', async () => {
    const out = path.join(temp.dir, 'export.sqlite');
    const result = await runCli(['export', '--format', 'sqlite', '--out', out], env());
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(querySqlite(out, 'SELECT id, title, price_text AS price FROM items ORDER BY id')).toEqual(
      latestTruth.map(({ id, title, price }) => ({ id, title, price })),
    );
    expect(querySqlite(out, 'SELECT run, previous_run FROM run')).toEqual([{ run: 2, previous_run: 1 }]);
    expect(querySqlite(out, 'SELECT count(*) AS n FROM changes')).toEqual([{ n: changeCount }]);
  });

  it.each([
    [
      ['--format', 'sqlite'],
      'shop-sync: --format sqlite needs --out FILE: a SQLite file cannot be written to stdout.\n',
    ],
    [['--run', '9'], 'shop-sync: Run 9 does not exist in shop shop.\n'],
    [
      ['--run', '3'],
      'shop-sync: Run 3 of shop shop is not complete (failed): only complete runs can be exported.\n',
    ],
  ])('refuses %j with exit 2 and one sentence', async (args, message) => {
    const result = await runCli(['export', ...args], env());
    expect(result).toMatchObject({ code: 2, stdout: '', stderr: message });
  });

  it.each([['--run', '0'], ['--run', 'latest'], ['--format', 'xml'], ['--bogus']])(
    'treats %j as a usage error',
    async (...args) => {
      const result = await runCli(['export', ...args], env());
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
    },
  );

  it('says which shop has nothing to export yet, exit 1 like a diff with too few runs', async () => {
    const result = await runCli(['export'], { ...env(), SHOP_NAME: 'empty' });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `shop-sync: Shop empty has no store at ${shopPaths(temp.dir, 'empty').store} yet: run "shop-sync sync" first.\n`,
    );
  });

  it('fails with exit 1 naming the file when --out cannot be written, leaving what was there', async () => {
    const blocker = path.join(temp.dir, 'blocker');
    writeFileSync(blocker, 'keep me');
    const out = path.join(blocker, 'feeds', 'inventory.csv');
    const result = await runCli(['export', '--out', out], env());
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `shop-sync: Cannot write ${out}: ENOTDIR not a directory\n`,
    });
  });
});
