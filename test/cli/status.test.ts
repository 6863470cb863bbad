import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Job, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerGroup } from '../../jobs/groups.js';
import {
  enqueueSync,
  groupOf,
  SCHEDULED_JOB,
  type ShopJobData,
  ShopQueues,
  SYNC_JOB,
  SYNC_JOB_OPTIONS,
  syncQueueName,
  TICK_JOB_OPTIONS,
} from '../../jobs/queue.js';
import { schedulerId } from '../../jobs/schedulers.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import type { SyncSummary } from '../../src/sync/index.js';
import { runCli } from '../helpers/cli.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../jobs/redis-fixtures.js';
import { simEnv, tempDir } from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let redis: Redis;

const STAND_IN_SHOPS = ['broken', 'flaky', 'running', 'later'];

beforeAll(async () => {
  sim = await startSimulator({ items: 50, seed: 8 });
  temp = tempDir('shop-sync-status-');
  const prefix = uniquePrefix('status');
  const configFile = path.join(temp.dir, 'shops.yaml');
  // `shop` (the simulator's, from the environment), `idle`, never synced, and the shops whose syncs
  // a stand-in worker ends the way their names say, each in its own queue.
  const others = STAND_IN_SHOPS.map((shop) => `  ${shop}: {}\n`).join('');
  writeFileSync(configFile, `shops:\n  idle:\n    schedule: "0 3 * * *"\n${others}`);
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
  workers: number;
  notifications: { waiting: unknown[]; retrying: unknown[]; failed: unknown[] };
  shops: {
    shop: string;
    schedule: string | null;
    next_run: string | null;
    scheduled: boolean;
    worker_connected: boolean;
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

  it('writes nothing to Redis: a command that reads leaves no key behind', async () => {
    const prefix = uniquePrefix('status-reads');
    const result = await runCli(['status', '--json'], { ...env, SYNC_QUEUE_PREFIX: prefix });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(await redis.keys(`${prefix}:*`)).toEqual([]);
  });

  it('says no worker is connected, shows no schedule where none was applied, and each last complete run', async () => {
    const sync = await runCli(['sync', '--shop', 'shop', '--json'], env);
    expect(sync.code).toBe(0);
    const run = (JSON.parse(sync.stdout) as SyncSummary).run;

    const result = await runCli(['status', '--json'], env);
    expect(result.code).toBe(0);
    const status = JSON.parse(result.stdout) as StatusJson;
    expect(status).toMatchObject({
      waiting: [],
      active: [],
      retrying: [],
      failed: [],
      failed_total: 0,
      workers: 0,
      notifications: { waiting: [], retrying: [], failed: [] },
    });
    expect(status.shops.map((s) => s.shop).sort()).toEqual([
      'broken',
      'flaky',
      'idle',
      'later',
      'running',
      'shop',
    ]);
    const idle = status.shops.find((s) => s.shop === 'idle');
    const shop = status.shops.find((s) => s.shop === 'shop');
    // `idle` is configured here with "0 3 * * *", but no worker applied it: status does not pretend.
    expect(idle).toEqual({
      shop: 'idle',
      schedule: null,
      next_run: null,
      scheduled: false,
      worker_connected: false,
      group: null,
      last_complete_run: null,
    });
    expect(shop).toMatchObject({
      shop: 'shop',
      scheduled: false,
      worker_connected: false,
      last_complete_run: { run, items: 50 },
    });

    const text = await runCli(['status'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Waiting: none');
    expect(text.stdout).toContain('Failed: none');
    expect(text.stdout.split('\n')[0]).toBe(
      'No worker is connected: nothing runs the waiting or scheduled syncs, nor delivers notifications. Start `shop-sync worker` with these shops configured.',
    );
    expect(text.stdout).toMatch(
      new RegExp(
        `shop +- +not scheduled: no worker has applied a schedule +none connected +run ${run}, 50 items, finished `,
      ),
    );
    expect(text.stdout).toMatch(
      /idle +- +not scheduled: no worker has applied a schedule +none connected +none/,
    );
    expect(text.stdout).toContain('Notifications: none pending');
  });

  it('lists waiting, active, retrying and failed syncs of every shop’s queue with their reasons', async () => {
    const queues = new ShopQueues(redis, env.SYNC_QUEUE_PREFIX as string, silentLogger());
    const brokenEvents = new QueueEvents(syncQueueName(groupOf(['broken'])), {
      connection: redis,
      prefix: queues.prefix,
    });
    let release: (() => void) | undefined;
    const busy = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Stand-ins for the worker, one per shop's queue; `later` has none, so its sync stays waiting.
    const standIn = async (job: Job<ShopJobData>) => {
      if (job.data.shop === 'broken')
        throw new UnrecoverableError('MARKETPLACE_PASSWORD was refused (HTTP 401).');
      if (job.data.shop === 'flaky') throw new Error('GET /v1/sell/shop/items answered HTTP 503.');
      await busy;
    };
    const [brokenWorker, flakyWorker, runningWorker] = ['broken', 'flaky', 'running'].map(
      (shop) =>
        new Worker<ShopJobData>(syncQueueName(groupOf([shop])), standIn, {
          connection: redis,
          prefix: queues.prefix,
        }),
    ) as [Worker, Worker, Worker];
    try {
      for (const shop of STAND_IN_SHOPS) await registerGroup(redis, queues.prefix, groupOf([shop]), [shop]);
      await brokenEvents.waitUntilReady();
      await brokenWorker.waitUntilReady();
      const broken = await enqueueSync(queues.syncOf(groupOf(['broken'])), 'broken');
      await expect(broken.job.waitUntilFinished(brokenEvents)).rejects.toThrow();
      // The sync's own attempts, with a back-off no test run outlasts: it stays retrying while we look.
      const retried = new Promise<void>((resolve) => flakyWorker.once('failed', () => resolve()));
      const flaky = await queues
        .syncOf(groupOf(['flaky']))
        .add(
          SYNC_JOB,
          { shop: 'flaky' },
          { ...SYNC_JOB_OPTIONS, backoff: { type: 'fixed', delay: 3_600_000 } },
        );
      await retried;
      expect(await flaky.getState()).toBe('delayed');
      const active = new Promise<void>((resolve) => runningWorker.once('active', () => resolve()));
      const running = await enqueueSync(queues.syncOf(groupOf(['running'])), 'running');
      await active;
      const later = await enqueueSync(queues.syncOf(groupOf(['later'])), 'later');
      // What `worker` sets for a configured shop: a scheduler in the tick queue, here with a pattern
      // other than this process's own setting for `later` (the default): status shows the worker's.
      await queues.ticks.upsertJobScheduler(
        schedulerId('later'),
        { pattern: '0 5 * * *' },
        { name: SCHEDULED_JOB, data: { shop: 'later' }, opts: TICK_JOB_OPTIONS },
      );

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
      const next = (await queues.ticks.getJobScheduler(schedulerId('later')))?.next;
      expect(status.workers).toBe(3);
      expect(status.shops.find((s) => s.shop === 'running')?.worker_connected).toBe(true);
      expect(status.shops.find((s) => s.shop === 'later')).toMatchObject({
        schedule: '0 5 * * *',
        worker_connected: false,
        scheduled: true,
        next_run: new Date(next ?? 0).toISOString(),
      });

      const text = (await runCli(['status'], env)).stdout;
      expect(text).not.toContain('No worker is connected');
      expect(text).toMatch(/later +0 5 \* \* \* +\S+ +none connected +none/);
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
      await Promise.all([brokenWorker, flakyWorker, runningWorker].map((worker) => worker.close()));
      await brokenEvents.close();
      for (const shop of STAND_IN_SHOPS) await queues.syncOf(groupOf([shop])).obliterate({ force: true });
      await queues.close();
    }
  });
});
