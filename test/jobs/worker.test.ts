import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Job, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueueSync, QUEUE_NAME, SCHEDULED_JOB, type ShopJobData, SYNC_JOB } from '../../jobs/queue.js';
import { scheduledSyncProcessor, schedulerId } from '../../jobs/schedulers.js';
import { startWorker, type WorkerHandle } from '../../jobs/worker.js';
import { type AppConfig, loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/open.js';
import { shopPaths } from '../../src/store/paths.js';
import { listRuns } from '../../src/store/runs.js';
import type { SyncSummary } from '../../src/sync.js';
import { simEnv, tempDir } from '../store/fixtures.js';
import { deletePrefix, requireRedis, TEST_REDIS_URL, uniquePrefix } from './redis-fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let prefix: string;
let redis: Redis;
let queue: Queue<ShopJobData, SyncSummary>;
let events: QueueEvents;
let worker: WorkerHandle | undefined;

beforeAll(async () => {
  await requireRedis();
  sim = await startSimulator({ items: 120, seed: 5 });
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis?.quit();
  await sim?.close();
});
beforeEach(async () => {
  temp = tempDir('shop-sync-worker-');
  prefix = uniquePrefix('worker');
  queue = new Queue(QUEUE_NAME, { connection: redis, prefix });
  events = new QueueEvents(QUEUE_NAME, { connection: redis, prefix });
  await events.waitUntilReady();
});
afterEach(async () => {
  await worker?.close();
  worker = undefined;
  await events.close();
  await queue.close();
  await deletePrefix(prefix);
  temp.cleanup();
});

/** Configuration through the real loader: the simulator's shop plus whatever `extra` sets. */
function configWith(extra: Record<string, string> = {}): AppConfig {
  return loadConfig({
    ...simEnv(sim, temp.dir),
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: prefix,
    SYNC_PER_PAGE: '25',
    ...extra,
  });
}

function runsOf(config: AppConfig, shop: string) {
  const store = openStore(shopPaths(config.dataDir, shop).store);
  try {
    return listRuns(store);
  } finally {
    store.close();
  }
}

describe('the worker', () => {
  it('processes a queued sync: the job returns the summary and the store has a complete run', async () => {
    const config = configWith();
    worker = await startWorker(config, silentLogger());
    const { job, deduplicated } = await enqueueSync(queue, 'shop');
    expect(deduplicated).toBe(false);

    const summary = await job.waitUntilFinished(events);

    expect(summary).toMatchObject({ shop: 'shop', run: 1, status: 'complete', items: 120, added: 120 });
    expect(runsOf(config, 'shop')).toEqual([
      expect.objectContaining({ run: 1, status: 'complete', items: 120 }),
    ]);
  });

  it('queues one sync per shop: a second request while one waits is that same job', async () => {
    const first = await enqueueSync(queue, 'shop');
    const second = await enqueueSync(queue, 'shop');
    const other = await enqueueSync(queue, 'other');

    expect(second).toMatchObject({ deduplicated: true });
    expect(second.job.id).toBe(first.job.id);
    expect(other.deduplicated).toBe(false);
    expect(await queue.getWaitingCount()).toBe(2);
  });

  it('fails a sync with rejected credentials at once, without retries, with the reason', async () => {
    worker = await startWorker(configWith({ MARKETPLACE_PASSWORD: 'wrong-password' }), silentLogger());
    const { job } = await enqueueSync(queue, 'shop');

    await expect(job.waitUntilFinished(events)).rejects.toThrow(/refused|rejected|credentials/i);

    const failed = (await queue.getJob(job.id as string)) as Job<ShopJobData, SyncSummary>;
    expect(await failed.getState()).toBe('failed');
    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).not.toContain('wrong-password');
    expect(sim.stats().tokenRefusals).toBeGreaterThan(0);
  });

  it('upserts one scheduler per configured shop and removes those of shops no longer configured', async () => {
    await queue.upsertJobScheduler(schedulerId('gone'), { pattern: '0 * * * *' }, { data: { shop: 'gone' } });
    const file = path.join(temp.dir, 'shops.yaml');
    writeFileSync(
      file,
      [
        'shops:',
        '  north:',
        `    base_url: ${sim.baseUrl}`,
        '    schedule: "*/5 * * * *"',
        '  south:',
        `    base_url: ${sim.baseUrl}`,
        '    schedule: "0 3 * * *"',
      ].join('\n'),
    );
    worker = await startWorker(
      loadConfig({ SHOP_SYNC_CONFIG: file, REDIS_URL: TEST_REDIS_URL, SYNC_QUEUE_PREFIX: prefix }),
      silentLogger(),
    );

    const schedulers = await queue.getJobSchedulers();
    const byId = Object.fromEntries(schedulers.map((s) => [s.id ?? s.key, s.pattern]));
    expect(byId).toEqual({ [schedulerId('north')]: '*/5 * * * *', [schedulerId('south')]: '0 3 * * *' });
  });

  it('turns a scheduler tick into a sync of its shop, deduplicated with one already queued', async () => {
    const waiting = await enqueueSync(queue, 'shop');
    const tick = scheduledSyncProcessor(queue);
    const tickOf = (shop: string) => queue.add(SCHEDULED_JOB, { shop });

    expect(await tick(await tickOf('shop'))).toEqual({
      shop: 'shop',
      job: waiting.job.id,
      deduplicated: true,
    });
    const other = await tick(await tickOf('other'));
    expect(other).toMatchObject({ shop: 'other', deduplicated: false });
    expect((await queue.getJob(other.job as string))?.data).toEqual({ shop: 'other' });
  });

  it('syncs on schedule without any trigger', async () => {
    const config = configWith({ SYNC_SCHEDULE: '* * * * * *' });
    worker = await startWorker(config, silentLogger());

    let synced: Job<ShopJobData, SyncSummary> | undefined;
    while (!synced) {
      await sleep(100);
      synced = (await queue.getJobs(['completed'])).find((job) => job.name === SYNC_JOB);
    }

    expect(synced.returnvalue).toMatchObject({ shop: 'shop', status: 'complete', items: 120 });
    expect(runsOf(config, 'shop')[0]).toMatchObject({ status: 'complete' });
  });
});
