import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli, SYNC_JSON_KEYS } from '../helpers/cli.js';
import { simEnv, tempDir } from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({ items: 400, seed: 11 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-cli-');
  env = { ...simEnv(sim, temp.dir), SYNC_PER_PAGE: '20' };
  sim.setFaults({ latencyMs: 0 });
});
afterEach(() => temp.cleanup());

const cli = (...args: string[]) => runCli(args, env);

/** The ids of a changes CSV, read by an independent parser (Python's csv module). */
function csvIds(text: string): string[] {
  const script = 'import csv,sys,json; print(json.dumps([r["id"] for r in csv.DictReader(sys.stdin)]))';
  return JSON.parse(execFileSync('python3', ['-c', script], { input: text }).toString());
}

describe('shop-sync runs, diff and prune after real syncs', () => {
  it('print exactly the contract JSON shapes', async () => {
    const first = await cli('sync', '--json');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const summary = JSON.parse(first.stdout);
    expect(Object.keys(summary)).toEqual(SYNC_JSON_KEYS);
    expect(summary).toMatchObject({
      shop: 'shop',
      run: 1,
      status: 'complete',
      items: 400,
      added: 400,
    });
    // 20 pages of 20, read as windows that overlap by a few items.
    expect(summary.pages).toBeGreaterThanOrEqual(20);

    const truth = sim.mutate({ prices: 2, publish: 1, add: 1, remove: 1 });
    expect((await cli('sync', '--json')).code).toBe(0);

    const runs = JSON.parse((await cli('runs', '--json')).stdout);
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      expect(Object.keys(run)).toEqual([
        'run',
        'status',
        'started_at',
        'finished_at',
        'items',
        'added',
        'updated',
        'removed',
        'error',
        'resumed_at',
        'attempts',
        'earlier_errors',
      ]);
      expect(run.error).toBeNull();
      expect([run.resumed_at, run.attempts, run.earlier_errors]).toEqual([null, 1, []]);
      expect(run.finished_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(runs[1]).toMatchObject({ run: 2, status: 'complete', added: 1, removed: 1, updated: 3 });

    const diff = JSON.parse((await cli('diff', '--format', 'json')).stdout);
    expect(Object.keys(diff)).toEqual(['shop', 'from', 'to', 'changes']);
    expect(diff).toMatchObject({ shop: 'shop', from: 1, to: 2 });
    const updated = diff.changes.find((c: { change: string }) => c.change === 'updated');
    expect(Object.keys(updated)).toEqual(['change', 'id', 'title', 'fields', 'before', 'after']);
    expect(Object.keys(updated.before).slice(0, 4)).toEqual([
      'price',
      'original_price',
      'quantity',
      'published',
    ]);
    for (const field of updated.fields) expect(updated.after).toHaveProperty(field);
    const removed = diff.changes.find((c: { change: string }) => c.change === 'removed');
    expect(removed.after).toBeNull();
    expect(removed.id).toBe(truth.removed[0]);
  });

  it('write the diff as csv or a table, to stdout or atomically to --out', async () => {
    await cli('sync');
    const truth = sim.mutate({ quantities: 2, titles: 1 });
    const second = await cli('sync');
    expect(second.stdout).toMatch(
      new RegExp(
        `^Shop shop: run 2 complete in \\d+\\.\\d s\\.\\n${sim.truth().length} items from \\d+ pages: 0 added, 3 updated, 0 removed\\.\\n$`,
      ),
    );
    const csv = await cli('diff', '--format', 'csv');
    expect(csv.stdout.split('\n')[0]).toBe(
      'change,id,title,changed_fields,price_before,price_after,quantity_before,quantity_after,published_before,published_after',
    );
    expect(csvIds(csv.stdout)).toEqual(truth.updated.map((u) => u.id).sort());
    const out = path.join(temp.dir, 'out', 'changes.csv');
    expect((await cli('diff', '--format', 'csv', '--out', out)).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(csv.stdout);
    const table = await cli('diff', '--from', '1', '--to', '2');
    expect(table.stdout.split('\n')[0]).toBe('Shop shop: run 1 -> run 2, 3 changes.');
    expect(table.stdout.split('\n')[1]).toMatch(/^CHANGE +ID +TITLE +FIELDS +PRICE +QUANTITY +PUBLISHED$/);
    expect(table.stdout.trimEnd().split('\n')).toHaveLength(5);
  });

  it('explain in one sentence why a diff cannot be made', async () => {
    const none = await cli('diff');
    expect([none.code, none.stderr]).toEqual([
      1,
      `shop-sync: A diff needs two complete runs; shop shop has 0 complete runs (no store in DATA_DIR ${temp.dir}).\n`,
    ]);
    await cli('sync');
    const one = await cli('diff');
    expect([one.code, one.stderr]).toEqual([
      1,
      'shop-sync: A diff needs two complete runs; shop shop has 1 complete run.\n',
    ]);
    const first = await cli('diff', '--to', '1');
    expect([first.code, first.stderr]).toEqual([
      1,
      'shop-sync: Shop shop has no complete run before run 1 to compare it with.\n',
    ]);
    const unknown = await cli('diff', '--from', '1', '--to', '7');
    // Worded as export words it.
    expect([unknown.code, unknown.stderr]).toEqual([2, 'shop-sync: Run 7 does not exist in shop shop.\n']);
    expect((await cli('export', '--run', '7')).stderr).toBe(unknown.stderr);
    const badFlag = await cli('diff', '--format', 'xml');
    expect(badFlag.code).toBe(2);
    expect((await cli('runs', '--bogus')).code).toBe(2);
    expect((await cli('prune')).code).toBe(2);
  });

  it('prune old runs and keeps later diffs exact', async () => {
    await cli('sync');
    sim.mutate({ prices: 2 });
    await cli('sync');
    sim.mutate({ quantities: 2, remove: 1 });
    await cli('sync');
    const before = (await cli('diff', '--format', 'json')).stdout;
    const pruned = await cli('prune', '--keep', '2');
    expect(pruned.stdout).toMatch(/^Shop shop: pruned runs 1 and \d+ item versions only they needed\.\n$/);
    expect((await cli('diff', '--format', 'json')).stdout).toBe(before);
    expect(JSON.parse((await cli('runs', '--json')).stdout).map((r: { run: number }) => r.run)).toEqual([
      2, 3,
    ]);
    expect((await cli('prune', '--keep', '2')).stdout).toBe(
      'Shop shop: nothing to prune (at most 2 complete runs).\n',
    );
    const table = (await cli('runs')).stdout.trimEnd().split('\n');
    expect(table[0]).toMatch(
      /^RUN +STATUS +STARTED +RESUMED +FINISHED +ATTEMPTS +PAGES +ITEMS +ADDED +UPDATED +REMOVED +INVALID +ERROR$/,
    );
    expect(table.slice(1).map((line) => line.split(/ +/).slice(0, 2))).toEqual([
      ['2', 'complete'],
      ['3', 'complete'],
    ]);
    const empty = await runCli(['runs'], { ...env, SHOP_NAME: 'never-synced' });
    expect(empty.stdout).toBe(`Shop never-synced has no runs yet (no store in DATA_DIR ${env.DATA_DIR}).\n`);
  });
});
