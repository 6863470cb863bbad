import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Job, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { JobOutcome } from '../../jobs/job-events.js';
import {
  enqueueSync,
  groupOf,
  SCHEDULED_JOB,
  type ShopJobData,
  ShopQueues,
  SYNC_JOB,
  syncQueueName,
  TICK_JOB_OPTIONS,
} from '../../jobs/queue.js';
import { scheduledSyncProcessor, schedulerId } from '../../jobs/schedulers.js';
import { startWorker, type WorkerHandle } from '../../jobs/start-worker.js';
import { type AppConfig, loadConfig } from '../../src/config/app-config.js';
import { ConfigError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/open.js';
import { shopPaths } from '../../src/store/paths.js';
import { listRuns } from '../../src/store/run-records.js';
import type { SyncSummary } from '../../src/sync/index.js';
import { simulatorShopLines } from '../helpers/config-files.js';
import { NEVER_DURING_TESTS, simEnv, tempDir } from '../store/fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from './redis-fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let prefix: string;
let redis: Redis;
let queues: ShopQueues;
const workers: WorkerHandle[] = [];

beforeAll(async () => {
  sim = await startSimulator({ items: 120, seed: 5 });
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis?.quit();
  await sim?.close();
});
beforeEach(() => {
  temp = tempDir('shop-sync-worker-');
  prefix = uniquePrefix('worker');
  queues = new ShopQueues(redis, prefix, silentLogger());
  sim.setFaults({ rate5xx: 0 });
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.close()));
  await queues.close();
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

/** A config file of several shops of the simulator, each with its own schedule. */
function shopsConfig(shops: Record<string, string>): AppConfig {
  const file = path.join(temp.dir, `shops-${Object.keys(shops).join('-')}.yaml`);
  const lines = ['shops:'];
  for (const [name, schedule] of Object.entries(shops)) {
    lines.push(...simulatorShopLines(sim, name, [`schedule: "${schedule}"`]));
  }
  writeFileSync(file, lines.join('\n'));
  return loadConfig({
    SHOP_SYNC_CONFIG: file,
    DATA_DIR: temp.dir,
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: prefix,
  });
}

async function start(config: AppConfig, options?: Parameters<typeof startWorker>[2]): Promise<WorkerHandle> {
  const worker = await startWorker(config, silentLogger(), options);
  workers.push(worker);
  return worker;
}

function runsOf(config: AppConfig, shop: string) {
  const store = openStore(shopPaths(config.dataDir, shop).store);
  try {
    return listRuns(store);
  } finally {
    store.close();
  }
}

async function finished(job: Job): Promise<Job> {
  for (;;) {
    const state = await job.getState();
    if (state === 'completed' || state === 'failed') {
      const queue = queues.all().find((q) => q.name === job.queueName);
      return (await queue?.getJob(job.id as string)) as Job;
    }
    await sleep(50);
  }
}

async function schedulerIds(): Promise<string[]> {
  return (await queues.ticks.getJobSchedulers()).map((s) => s.id ?? s.key).sort();
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(50);
}

describe('the worker', () => {
  it('processes a queued sync: the job returns the summary and the store has a complete run', async () => {
    const config = configWith();
    await start(config);
    const { job, deduplicated } = await enqueueSync(queues.syncOf(groupOf(['shop'])), 'shop');
    expect(deduplicated).toBe(false);

    const done = await finished(job);

    expect(done.returnvalue).toMatchObject({
      shop: 'shop',
      run: 1,
      status: 'complete',
      items: 120,
      added: 120,
    });
    expect(runsOf(config, 'shop')).toEqual([
      expect.objectContaining({ run: 1, status: 'complete', items: 120 }),
    ]);
  });

  it('completes a sync whose shop lists items with values outside the limits, counting them invalid', async () => {
    const [a, b] = sim.truth();
    const ids = [a?.id ?? '', b?.id ?? ''];
    sim.mutate({
      poison: [
        { id: ids[0] as string, field: 'price', json: '"1e999999999"' },
        { id: ids[1] as string, field: 'quantity', json: '9007199254740993' },
      ],
    });
    try {
      const config = configWith();
      await start(config);
      const { job } = await enqueueSync(queues.syncOf(groupOf(['shop'])), 'shop');
      const done = await finished(job);
      expect(done.failedReason).toBeUndefined();
      expect(done.returnvalue).toMatchObject({ status: 'complete', items: 118, added: 118, invalid: 2 });
    } finally {
      sim.mutate({ cure: ids });
    }
  });

  it('queues one sync per shop that has not started: a second request while one waits is that same job', async () => {
    const first = await enqueueSync(queues.syncOf(groupOf(['shop'])), 'shop');
    const second = await enqueueSync(queues.syncOf(groupOf(['shop'])), 'shop');
    const other = await enqueueSync(queues.syncOf(groupOf(['other'])), 'other');

    expect(second).toMatchObject({ deduplicated: true });
    expect(second.job.id).toBe(first.job.id);
    expect(other.deduplicated).toBe(false);
    expect(await queues.syncOf(groupOf(['shop'])).getWaitingCount()).toBe(1);
  });

  it('writes progress to Redis now and then, not once per page', async () => {
    await start(configWith({ SYNC_PER_PAGE: '4' }));
    const events = new QueueEvents(syncQueueName(groupOf(['shop'])), {
      connection: { url: TEST_REDIS_URL },
      prefix,
    });
    let writes = 0;
    events.on('progress', () => {
      writes += 1;
    });
    await events.waitUntilReady();
    try {
      const done = await finished((await enqueueSync(queues.syncOf(groupOf(['shop'])), 'shop')).job);

      expect(done.returnvalue).toMatchObject({ status: 'complete', items: 120 });
      expect(writes).toBeGreaterThanOrEqual(1);
      expect(writes).toBeLessThan(10);
    } finally {
      await events.close();
    }
  });

  it('reuses the shop token across syncs: several jobs log in once', async () => {
    await start(configWith());
    const before = sim.stats().tokenRequests.password;

    for (let i = 0; i < 3; i += 1) {
      const done = await finished((await enqueueSync(queues.syncOf(groupOf(['shop'])), 'shop')).job);
      expect(done.returnvalue).toMatchObject({ status: 'complete' });
    }

    expect(sim.stats().tokenRequests.password - before).toBe(1);
  });

  it('fails a sync with rejected credentials at once, without retries, with the reason', async () => {
    const worker = await start(configWith({ MARKETPLACE_PASSWORD: 'wrong-password' }));
    const outcomes: JobOutcome[] = [];
    worker.onOutcome((outcome) => outcomes.push(outcome));
    const { job } = await enqueueSync(queues.syncOf(groupOf(['shop'])), 'shop');

    const failed = await finished(job);

    expect(await failed.getState()).toBe('failed');
    expect(failed.failedReason).toMatch(/refused|rejected|credentials/i);
    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).not.toContain('wrong-password');
    await until(async () => outcomes.length > 0);
    expect(outcomes).toEqual([
      {
        shop: 'shop',
        job: failed.id,
        outcome: 'failed',
        code: 'CREDENTIALS_REJECTED',
        reason: failed.failedReason,
      },
    ]);
  });

  it('fails for good, with the reason, a job that is not a sync of its shop or a bug', async () => {
    let calls = 0;
    const bug = () => {
      calls += 1;
      throw new TypeError('progress hook broke');
    };
    await start(configWith(), { extraDeps: () => ({ onProgress: bug }) });
    const queue = queues.syncOf(groupOf(['shop']));

    const exported = await finished(
      await queue.add('export' as typeof SYNC_JOB, { shop: 'shop' }, { attempts: 6 }),
    );
    const empty = await finished(await queue.add(SYNC_JOB, {} as ShopJobData, { attempts: 6 }));
    const broken = await finished(await queue.add(SYNC_JOB, { shop: 'shop' }, { attempts: 6 }));
    const tick = await finished(await queues.ticks.add(SCHEDULED_JOB, { shop: '../etc' }, { attempts: 6 }));

    expect(exported.failedReason).toBe('Job "export" is not a sync: the sync queue runs only "sync" jobs.');
    expect(empty.failedReason).toBe("The sync job's data {} does not name a shop.");
    expect(broken.failedReason).toBe('unexpected error: progress hook broke');
    expect(tick.failedReason).toMatch(
      /^Job "scheduled-sync" with data .* is not a scheduler tick of a shop\.$/,
    );
    for (const job of [exported, empty, broken, tick]) expect(job.attemptsMade).toBe(1);
    expect(calls).toBe(1);
    expect(runsOf(configWith(), 'shop')).toEqual([expect.objectContaining({ status: 'failed' })]);
  });

  it('refuses to start, naming the setting, when a shop cannot sync', async () => {
    const config = loadConfig({ DATA_DIR: temp.dir, REDIS_URL: TEST_REDIS_URL, SYNC_QUEUE_PREFIX: prefix });

    const starting = startWorker(config, silentLogger());

    await expect(starting).rejects.toThrow(ConfigError);
    await expect(starting).rejects.toThrow(
      'MARKETPLACE_BASE_URL is not set for shop "default": a sync needs it.',
    );
    expect(await schedulerIds()).toEqual([]);
  });
});

describe('schedules', () => {
  it('upserts one scheduler per configured shop and removes only those of shops no worker serves', async () => {
    await queues.ticks.upsertJobScheduler(
      schedulerId('gone'),
      { pattern: '0 * * * *' },
      { data: { shop: 'gone' } },
    );
    const other = await start(shopsConfig({ east: '0 4 * * *' }));
    await start(shopsConfig({ north: '*/5 * * * *', south: '0 3 * * *' }));

    const byId = Object.fromEntries(
      (await queues.ticks.getJobSchedulers()).map((s) => [s.id ?? s.key, s.pattern]),
    );
    expect(byId).toEqual({
      [schedulerId('east')]: '0 4 * * *',
      [schedulerId('north')]: '*/5 * * * *',
      [schedulerId('south')]: '0 3 * * *',
    });

    await other.close();
    await start(shopsConfig({ north: '*/5 * * * *' }));
    expect(await schedulerIds()).toEqual([schedulerId('north'), schedulerId('south')]);
  });

  it('takes a changed schedule of a shop at the next start', async () => {
    const before = await start(shopsConfig({ north: '0 4 * * *' }));
    await before.close();
    await start(shopsConfig({ north: '*/5 * * * *' }));

    const [scheduler] = await queues.ticks.getJobSchedulers();
    expect(scheduler).toMatchObject({ key: schedulerId('north'), pattern: '*/5 * * * *' });
  });

  it('sends a sync to a worker that knows its shop, with two workers of different shops on one Redis', async () => {
    await start(shopsConfig({ north: NEVER_DURING_TESTS }));
    await start(shopsConfig({ south: NEVER_DURING_TESTS }));

    const jobs = await Promise.all(
      ['north', 'south'].map(async (shop) => (await enqueueSync(queues.syncOf(groupOf([shop])), shop)).job),
    );
    const done = await Promise.all(jobs.map(finished));

    expect(done.map((job) => job.returnvalue)).toEqual([
      expect.objectContaining({ shop: 'north', status: 'complete' }),
      expect.objectContaining({ shop: 'south', status: 'complete' }),
    ]);
  });

  it('come back after Redis lost them: on reconnection and periodically', async () => {
    const worker = await start(configWith(), { scheduleRefreshMs: 3_600_000 });
    await queues.ticks.removeJobScheduler(schedulerId('shop'));
    const id = await worker.redis.client('ID');
    await redis.client('KILL', 'ID', String(id));
    await until(async () => (await schedulerIds()).includes(schedulerId('shop')));

    await start(configWith(), { scheduleRefreshMs: 100 });
    await deletePrefix(prefix);
    await until(async () => (await schedulerIds()).includes(schedulerId('shop')));
  });

  it('turns a tick into a sync of its shop, deduplicated with one that has not started; a shop no worker serves queues nothing', async () => {
    const waiting = await enqueueSync(queues.syncOf(groupOf(['shop'])), 'shop');
    const tick = scheduledSyncProcessor(queues, { group: groupOf(['shop']), shops: new Set(['shop']) });
    const tickOf = (shop: string) => queues.ticks.add(SCHEDULED_JOB, { shop });

    expect(await tick(await tickOf('shop'))).toEqual({
      shop: 'shop',
      job: waiting.job.id,
      deduplicated: true,
    });
    await expect(tick(await tickOf('other'))).rejects.toThrow(
      'No worker serves shop other: its tick queues nothing.',
    );
    expect(await queues.syncOf(groupOf(['other'])).getJobCounts()).toMatchObject({ waiting: 0, delayed: 0 });
  });

  it("sends the tick of another group's shop to that group", async () => {
    const north = await start(shopsConfig({ north: NEVER_DURING_TESTS }));
    await start(shopsConfig({ south: NEVER_DURING_TESTS }));
    const tick = scheduledSyncProcessor(queues, { group: groupOf(['south']), shops: new Set(['south']) });

    const queued = await tick(await queues.ticks.add(SCHEDULED_JOB, { shop: 'north' }));

    expect(north.group).toBe(groupOf(['north']));
    const job = await queues.syncOf(north.group).getJob(queued.job as string);
    expect((await finished(job as Job)).returnvalue).toMatchObject({ shop: 'north', status: 'complete' });
  });

  it('keeps the ticks apart from the syncs: many ticks trim no sync from the history', async () => {
    await start(configWith());
    for (let i = 0; i < 3; i += 1)
      await finished((await enqueueSync(queues.syncOf(groupOf(['shop'])), 'shop')).job);
    const ticks = await queues.ticks.addBulk(
      Array.from({ length: 150 }, () => ({
        name: SCHEDULED_JOB,
        data: { shop: 'shop' },
        opts: TICK_JOB_OPTIONS,
      })),
    );
    await until(async () => (await queues.ticks.getJobCounts('wait', 'active')).wait === 0);
    await finished((await enqueueSync(queues.syncOf(groupOf(['shop'])), 'shop')).job);

    expect(ticks).toHaveLength(150);
    expect(await queues.ticks.getCompletedCount()).toBe(0);
    expect(await queues.syncOf(groupOf(['shop'])).getCompletedCount()).toBeGreaterThanOrEqual(4);
  });

  it('syncs on schedule without any trigger', async () => {
    const config = configWith({ SYNC_SCHEDULE: '* * * * * *' });
    await start(config);

    let synced: Job<ShopJobData, SyncSummary> | undefined;
    while (!synced) {
      await sleep(100);
      synced = (await queues.syncOf(groupOf(['shop'])).getJobs(['completed'])).find(
        (job) => job.name === SYNC_JOB,
      );
    }

    expect(synced.returnvalue).toMatchObject({ shop: 'shop', status: 'complete', items: 120 });
    expect(runsOf(config, 'shop')[0]).toMatchObject({ status: 'complete' });
  });
});
