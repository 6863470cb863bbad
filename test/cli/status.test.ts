import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Job, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueSync, QUEUE_NAME, type ShopJobData, SYNC_JOB, SYNC_JOB_OPTIONS } from '../../jobs/queue.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import type { SyncSummary } from '../../src/sync.js';
import { runCli } from '../helpers/cli.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../jobs/redis-fixtures.js';
import { simEnv, tempDir } from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let redis: Redis;

beforeAll(async () => {
  sim = await startSimulator({ items: 50, seed: 8 });
  temp = tempDir('shop-sync-status-');
  const prefix = uniquePrefix('status');
  const configFile = path.join(temp.dir, 'shops.yaml');
  // Two shops: `shop` (the simulator's, from the environment) and `idle`, never synced.
  writeFileSync(configFile, 'shops:\n  idle:\n    schedule: "0 3 * * *"\n');
  env = {
    ...simEnv(sim, temp.dir),
    SHOP_SYNC_CONFIG: configFile,
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: prefix,
  };
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis.quit();
  await deletePrefix(env.SYNC_QUEUE_PREFIX as string);
  await sim.close();
  temp.cleanup();
});

interface StatusJson {
  waiting: { shop: string; id: string }[];
  active: { shop: string; id: string }[];
  retrying: {
    shop: string;
    attempts: number;
    max_attempts: number;
    reason: string;
    next_attempt_after: string;
  }[];
  failed: { shop: string; reason: string; finished_at: string }[];
  failed_total: number;
  shops: {
    shop: string;
    schedule: string;
    next_run: string;
    scheduled: boolean;
    last_complete_run: { run: number; items: number; finished_at: string } | null;
  }[];
}

describe('shop-sync status', () => {
  it('says in one sentence that Redis does not answer, and exits 1', async () => {
    const result = await runCli(['status'], { ...env, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('Redis at redis://127.0.0.1:1 (REDIS_URL) does not answer');
    expect(result.stdout).toBe('');
  });

  it('shows an empty queue, each shop’s schedule, next run and last complete run', async () => {
    const sync = await runCli(['sync', '--shop', 'shop', '--json'], env);
    expect(sync.code).toBe(0);
    const run = (JSON.parse(sync.stdout) as SyncSummary).run;

    const result = await runCli(['status', '--json'], env);
    expect(result.code).toBe(0);
    const status = JSON.parse(result.stdout) as StatusJson;
    expect(status).toMatchObject({ waiting: [], active: [], retrying: [], failed: [], failed_total: 0 });
    const [idle, shop] = [...status.shops].sort((a, b) => a.shop.localeCompare(b.shop));
    expect(idle).toMatchObject({
      shop: 'idle',
      schedule: '0 3 * * *',
      scheduled: false,
      last_complete_run: null,
    });
    expect(new Date(idle?.next_run ?? '').getUTCHours()).toBe(3);
    expect(shop).toMatchObject({ shop: 'shop', last_complete_run: { run, items: 50 } });

    const text = await runCli(['status'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Waiting: none');
    expect(text.stdout).toContain('Failed: none');
    expect(text.stdout).toMatch(
      new RegExp(`shop +\\*/15 \\* \\* \\* \\* .* run ${run}, 50 items, finished `),
    );
    expect(text.stdout).toMatch(/idle +0 3 \* \* \* .*no worker has set this schedule yet\) +none/);
  });

  it('lists waiting, active, retrying and failed syncs with their reasons', async () => {
    const prefix = env.SYNC_QUEUE_PREFIX as string;
    const queue = new Queue<ShopJobData, SyncSummary>(QUEUE_NAME, { connection: redis, prefix });
    const events = new QueueEvents(QUEUE_NAME, { connection: redis, prefix });
    let release: (() => void) | undefined;
    const busy = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A stand-in for the worker: each shop's job ends the way its name says.
    const worker = new Worker<ShopJobData>(
      QUEUE_NAME,
      async (job: Job<ShopJobData>) => {
        if (job.data.shop === 'broken')
          throw new UnrecoverableError('MARKETPLACE_PASSWORD was refused (HTTP 401).');
        if (job.data.shop === 'flaky') throw new Error('GET /v1/sell/shop/items answered HTTP 503.');
        await busy;
      },
      { connection: redis, prefix, concurrency: 3 },
    );
    try {
      await events.waitUntilReady();
      const broken = await enqueueSync(queue, 'broken');
      await expect(broken.job.waitUntilFinished(events)).rejects.toThrow();
      // The sync's own attempts, with a back-off no test run outlasts: it stays retrying while we look.
      const retried = new Promise<void>((resolve) => worker.once('failed', () => resolve()));
      const flaky = await queue.add(
        SYNC_JOB,
        { shop: 'flaky' },
        { ...SYNC_JOB_OPTIONS, backoff: { type: 'fixed', delay: 3_600_000 } },
      );
      await retried;
      expect(await flaky.getState()).toBe('delayed');
      const active = new Promise<void>((resolve) => worker.once('active', () => resolve()));
      const running = await enqueueSync(queue, 'running');
      await active;
      await worker.pause(true);
      const later = await enqueueSync(queue, 'later');

      const result = await runCli(['status', '--json'], env);
      expect(result.code).toBe(0);
      const status = JSON.parse(result.stdout) as StatusJson;
      expect(status.waiting.map((j) => [j.shop, j.id])).toEqual([['later', later.job.id]]);
      expect(status.active.map((j) => [j.shop, j.id])).toEqual([['running', running.job.id]]);
      expect(status.retrying).toMatchObject([
        { shop: 'flaky', attempts: 1, max_attempts: 6, reason: 'GET /v1/sell/shop/items answered HTTP 503.' },
      ]);
      expect(Date.parse(status.retrying[0]?.next_attempt_after ?? '')).toBeGreaterThan(Date.now());
      expect(status.failed).toMatchObject([
        { shop: 'broken', reason: 'MARKETPLACE_PASSWORD was refused (HTTP 401).' },
      ]);
      expect(status.failed_total).toBe(1);

      const text = (await runCli(['status'], env)).stdout;
      expect(text).toMatch(
        /Retrying:\n {2}SHOP +JOB +ATTEMPTS.*\n {2}flaky .* 1\/6 .* GET \/v1\/sell\/shop\/items answered HTTP 503\./,
      );
      expect(text).toMatch(
        /Failed:\n {2}SHOP .*\n {2}broken .* MARKETPLACE_PASSWORD was refused \(HTTP 401\)\./,
      );
      expect(text).toMatch(/Waiting:\n {2}SHOP .*\n {2}later /);
      expect(text).toMatch(/Active:\n {2}SHOP .*\n {2}running /);
    } finally {
      release?.();
      await worker.close();
      await events.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
