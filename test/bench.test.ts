import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from './jobs/redis-fixtures.js';

const run = promisify(execFile);

/** The benchmark at a tiny size, so that the harness cannot rot unnoticed; its figures are not checked. */
describe('npm run bench (smoke, tiny sizes)', () => {
  let out: string | undefined;
  afterEach(() => {
    if (out) rmSync(out, { recursive: true, force: true });
  });

  function result(): Record<string, unknown> {
    const files = readdirSync(out as string);
    expect(files).toHaveLength(1);
    return JSON.parse(readFileSync(path.join(out as string, files[0] as string), 'utf8'));
  }

  it('measures every command of a single shop and writes one JSON file of the run', async () => {
    out = mkdtempSync(path.join(tmpdir(), 'shop-sync-bench-smoke-'));
    const { stdout } = await run(process.execPath, [
      'dist/bench/run.js',
      '--items',
      '1000',
      '--latencies',
      '0',
      '--out',
      out,
    ]);
    expect(stdout).toContain('unchanged resync (0 ms)');
    const { single } = result() as { single: { rows: Array<{ name: string; timeVsBaseline: number }> } };
    expect(single.rows.map((row) => row.name)).toEqual([
      'baseline client (0 ms)',
      'CLI start-up only (--help)',
      'first sync (0 ms)',
      'unchanged resync (0 ms)',
      '1 % resync (0 ms)',
      'diff of the last two runs',
      'export --format csv',
    ]);
    for (const row of single.rows) expect(Number.isFinite(row.timeVsBaseline)).toBe(true);
  });

  /** The keys of every fleet run: `shop-sync-bench-<pid>-<workers>-<time>:…`. */
  async function benchKeys(): Promise<string[]> {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      return await redis.keys('shop-sync-bench-*');
    } finally {
      await redis.quit();
    }
  }

  it('syncs a fleet through the given Redis with two worker processes, one login per shop, and leaves no key', async () => {
    out = mkdtempSync(path.join(tmpdir(), 'shop-sync-bench-smoke-'));
    await run(process.execPath, [
      'dist/bench/run.js',
      '--fleet',
      '--shops',
      '3',
      '--shop-items',
      '200',
      '--workers',
      '2',
      '--redis-url',
      TEST_REDIS_URL,
      '--out',
      out,
    ]);
    const { fleet } = result() as {
      fleet: {
        runs: Array<{
          workers: number;
          rounds: Array<{ name: string; syncs: number; passwordLogins: number }>;
        }>;
      };
    };
    expect(fleet.runs.map((r) => r.workers)).toEqual([2]);
    for (const { rounds } of fleet.runs) {
      expect(rounds.map((r) => [r.name, r.syncs])).toEqual([
        ['first syncs', 3],
        ['unchanged resyncs', 3],
      ]);
      expect(rounds.map((r) => r.passwordLogins)).toEqual([3, 0]);
    }
    expect(await benchKeys()).toEqual([]);
  });

  it('measures a fleet at scale on one worker: its connections, start-up, memory and shutdown, and leaves no key', async () => {
    out = mkdtempSync(path.join(tmpdir(), 'shop-sync-bench-smoke-'));
    await run(process.execPath, [
      'dist/bench/run.js',
      '--scale',
      '--shops',
      '12',
      '--shop-items',
      '5',
      '--redis-url',
      TEST_REDIS_URL,
      '--out',
      out,
    ]);
    const { scale } = result() as {
      scale: {
        shops: number;
        connections: { idle: number; peak: number };
        startupMs: number;
        shutdownMs: number;
      };
    };
    expect(scale.shops).toBe(12);
    expect(scale.connections.idle).toBeGreaterThan(0);
    expect(scale.connections.peak).toBeLessThanOrEqual(5);
    expect(Number.isFinite(scale.startupMs) && Number.isFinite(scale.shutdownMs)).toBe(true);
    expect(await benchKeys()).toEqual([]);
  }, 180_000);

  it('fails naming the Redis it was given when that one does not answer', async () => {
    out = mkdtempSync(path.join(tmpdir(), 'shop-sync-bench-smoke-'));
    const fleet = run(process.execPath, [
      'dist/bench/run.js',
      '--fleet',
      '--shops',
      '1',
      '--shop-items',
      '10',
      '--workers',
      '1',
      '--redis-url',
      'redis://127.0.0.1:1/9',
      '--out',
      out,
    ]);
    await expect(fleet).rejects.toThrow('Redis at redis://127.0.0.1:1/9 (REDIS_URL) does not answer');
    expect(readdirSync(out)).toEqual([]);
  });
});
