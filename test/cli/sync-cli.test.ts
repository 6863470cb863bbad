import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/open.js';
import { shopPaths } from '../../src/store/paths.js';
import { snapshotItems } from '../../src/store/snapshot.js';
import { runCli } from '../helpers/cli.js';
import { simEnv, tempDir, truthById, withoutRaw } from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let store: string;

beforeAll(async () => {
  sim = await startSimulator({ items: 400, seed: 11 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-cli-');
  env = { ...simEnv(sim, temp.dir), SYNC_PER_PAGE: '20' };
  store = shopPaths(temp.dir, 'shop').store;
  sim.setFaults({ latencyMs: 0 });
});
afterEach(() => temp.cleanup());

const cli = (...args: string[]) => runCli(args, env);

/** Reads the store as an outside reader (another process would) while a sync may be writing it. */
function peek<T>(sql: string): T | undefined {
  if (!existsSync(store)) return undefined;
  const db = new Database(store, { readonly: true });
  try {
    return db.prepare(sql).get() as T | undefined;
  } catch (error) {
    // The sync may not have created its tables yet: that is "no checkpoint yet", anything else is not.
    if (/no such table/.test(String(error))) return undefined;
    throw error;
  } finally {
    db.close();
  }
}

function spawnSync(): ChildProcess {
  return spawn(process.execPath, [path.resolve('bin/shop-sync.js'), 'sync', '--json'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Waits until the sync in `child` has checkpointed `page`; fails if the child ends first. */
async function waitForCheckpoint(child: ChildProcess, page: number): Promise<void> {
  const sql = "SELECT max(checkpoint_page) AS p FROM runs WHERE status = 'running'";
  while ((peek<{ p: number }>(sql)?.p ?? 0) < page) {
    if (child.exitCode !== null)
      throw new Error(`the sync ended (exit ${child.exitCode}) before page ${page}`);
    await sleep(20);
  }
}

describe('shop-sync sync', () => {
  it('resumes a killed sync from its checkpoint, and the killed run never became the snapshot', async () => {
    expect((await cli('sync')).code).toBe(0);
    const feed = shopPaths(temp.dir, 'shop').inventoryCsv;
    const feedBefore = readFileSync(feed, 'utf8');
    const runsBefore = JSON.parse((await cli('runs', '--json')).stdout);
    const truth = sim.mutate({ prices: 3, add: 2, remove: 2 });
    sim.setFaults({ latencyMs: 250 });
    const child = spawnSync();
    await waitForCheckpoint(child, 4);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
    expect(peek<{ pid: number }>('SELECT pid FROM lease')?.pid).toBe(child.pid);

    const runs = JSON.parse((await cli('runs', '--json')).stdout);
    expect(runs.map((r: { status: string }) => r.status)).toEqual(['complete', 'running']);
    expect(runs[0]).toEqual(runsBefore[0]);
    expect(readFileSync(feed, 'utf8')).toBe(feedBefore);
    const none = await cli('diff');
    expect(none.code).toBe(1);

    sim.setFaults({ latencyMs: 0 });
    const listingBefore = sim.listingArrivals().length;
    const resumed = await cli('sync', '--json');
    expect(resumed.stderr).toBe('');
    const items = sim.truth().length;
    expect(JSON.parse(resumed.stdout)).toMatchObject({ run: 2, status: 'complete', items });
    const resumedFrom = peek<{ p: number }>('SELECT resumed_from_page AS p FROM runs WHERE run = 2')?.p ?? 0;
    expect(resumedFrom).toBeGreaterThan(4);
    // It read on from the items it had proved, not from page 1 (any page size starts there).
    const pagesAsked = sim
      .listingArrivals()
      .slice(listingBefore)
      .map((arrival) => arrival.page);
    expect(Math.min(...pagesAsked)).toBeGreaterThan(1);

    const opened = openStore(store);
    try {
      expect(withoutRaw(snapshotItems(opened, 2))).toEqual(truthById(sim));
    } finally {
      opened.close();
    }
    const diff = JSON.parse((await cli('diff', '--format', 'json')).stdout);
    expect(diff.changes.map((c: { change: string; id: string }) => `${c.change} ${c.id}`).sort()).toEqual(
      [
        ...truth.added.map((id) => `added ${id}`),
        ...truth.removed.map((id) => `removed ${id}`),
        ...truth.updated.map((u) => `updated ${u.id}`),
      ].sort(),
    );
  });

  it('keeps a resumed run history: first start, resumption, attempts and the error of the failed attempt', async () => {
    env.SYNC_RETRY_BUDGET_SECONDS = '2';
    expect((await cli('sync')).code).toBe(0);
    sim.mutate({ prices: 3 });
    sim.setFaults({ latencyMs: 250 });
    const child = spawnSync();
    const failedExit = new Promise<number | null>((resolve) => child.once('close', resolve));
    await waitForCheckpoint(child, 2);
    // The marketplace goes away mid-run for longer than the retry budget: the attempt fails, resumable.
    sim.setFaults({ latencyMs: 0, rate5xx: 1 });
    try {
      expect(await failedExit).toBe(1);
    } finally {
      sim.setFaults({ rate5xx: 0 });
    }
    const failed = JSON.parse((await cli('runs', '--json')).stdout)[1];
    expect(failed).toMatchObject({
      run: 2,
      status: 'failed',
      attempts: 1,
      resumed_at: null,
      earlier_errors: [],
    });
    expect(failed.error).toMatch(/HTTP 5\d\d/);

    const resumed = await cli('sync', '--json');
    expect([resumed.code, JSON.parse(resumed.stdout).run]).toEqual([0, 2]);
    const [first, run] = JSON.parse((await cli('runs', '--json')).stdout);
    expect(first).toMatchObject({ run: 1, attempts: 1, resumed_at: null, earlier_errors: [] });
    expect(run).toMatchObject({
      run: 2,
      status: 'complete',
      started_at: failed.started_at,
      error: null,
      attempts: 2,
      earlier_errors: [{ at: failed.finished_at, code: 'MARKETPLACE_UNREACHABLE', message: failed.error }],
    });
    expect(Date.parse(run.resumed_at)).toBeGreaterThanOrEqual(Date.parse(failed.finished_at));
    const table = (await cli('runs')).stdout;
    expect(table).toContain(`Run 2, attempt 1 of 2, stopped at ${failed.finished_at}: ${failed.error}\n`);
  });

  it('tells a second concurrent sync that the shop is busy, and the first completes', async () => {
    await cli('sync');
    sim.setFaults({ latencyMs: 250 });
    const first = spawnSync();
    const firstDone = new Promise<number | null>((resolve) => first.once('close', resolve));
    await waitForCheckpoint(first, 1);
    // Read-ahead hides 250 ms of latency well: hold the first sync's later pages back while the second starts.
    sim.setFaults({ latencyMs: 2000 });
    const second = await cli('sync');
    sim.setFaults({ latencyMs: 0 });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      new RegExp(
        `^shop-sync: Another sync of shop shop is running \\(pid ${first.pid} on host ${hostname()}, since \\S+Z\\)\\.\\n$`,
      ),
    );
    expect(await firstDone).toBe(0);
    expect(JSON.parse((await cli('runs', '--json')).stdout).map((r: { status: string }) => r.status)).toEqual(
      ['complete', 'complete'],
    );
  });

  it('fails with exit 1 and one sentence when the credentials are rejected, keeping the data', async () => {
    await cli('sync');
    const feed = readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv, 'utf8');
    const rejected = await runCli(['sync'], { ...env, MARKETPLACE_PASSWORD: 'wrong-password-123' });
    expect(rejected.code).toBe(1);
    expect(rejected.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(rejected.stderr).toMatch(/^shop-sync: .*(password|user|owner)/i);
    expect(rejected.stderr).not.toContain('wrong-password-123');
    expect(readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv, 'utf8')).toBe(feed);
    const runs = JSON.parse((await cli('runs', '--json')).stdout);
    expect(runs.map((r: { status: string }) => r.status)).toEqual(['complete', 'failed']);
  });

  it('fails with exit 1 naming the store when it is corrupt, and leaves it untouched', async () => {
    mkdirSync(path.dirname(store), { recursive: true });
    writeFileSync(store, 'not a database at all, just some text long enough to fill a header......');
    const result = await cli('sync');
    expect([result.code, result.stderr]).toEqual([
      1,
      `shop-sync: Cannot open store ${store}: it is corrupt (file is not a database). Move it aside (with its -wal and -shm files, if any), for example to inventory.sqlite.corrupt: the next sync starts a new history, and the feeds stay as last published until then.\n`,
    ]);
    expect(readFileSync(store, 'utf8')).toMatch(/^not a database/);
  });

  it('has --help for each command', async () => {
    for (const command of ['sync', 'runs', 'diff', 'prune']) {
      const help = await cli(command, '--help');
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: shop-sync ${command}`);
    }
  });
});
