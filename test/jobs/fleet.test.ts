import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectionsTo } from '../../bench/redis-connections.js';
import { DELIVER_JOB } from '../../jobs/deliveries.js';
import {
  enqueueSync,
  groupOf,
  legacyNotifyQueueName,
  legacySyncQueueName,
  ShopQueues,
  SYNC_JOB,
  SYNC_JOB_OPTIONS,
} from '../../jobs/queue.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { Receiver } from '../helpers/receiver.js';
import { killAll, startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';
import { NEVER_DURING_TESTS, tempDir } from '../store/fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from './redis-fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let prefix: string;
let redis: Redis;
let queues: ShopQueues;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ items: 60, seed: 31 });
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis?.quit();
  await sim?.close();
});
beforeEach(() => {
  temp = tempDir('shop-sync-fleet-');
  prefix = uniquePrefix('fleet');
  queues = new ShopQueues(redis, prefix, silentLogger());
  sim.setFaults({ latencyMs: 0, rate5xx: 0 });
});
afterEach(async () => {
  await killAll(workers);
  await queues.close();
  await deletePrefix(prefix);
  temp.cleanup();
});

/** A config file of `shops` (all the simulator's one shop, each with a store of its own) and its environment. */
function fleetEnv(name: string, shops: readonly string[], extra: Record<string, unknown> = {}) {
  const { clientId, clientSecret, username, password } = sim.credentials;
  const entries = shops.map((shop) => [
    shop,
    {
      base_url: sim.baseUrl,
      client_id: clientId,
      client_secret: clientSecret,
      username,
      password,
      per_page: 20,
      schedule: NEVER_DURING_TESTS,
    },
  ]);
  const file = path.join(temp.dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ data_dir: temp.dir, shops: Object.fromEntries(entries), ...extra }));
  return {
    SHOP_SYNC_CONFIG: file,
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: prefix,
    OPS_PORT: '0',
    LOG_FORMAT: 'json',
  };
}

async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const worker = await startWorkerProcess(env);
  workers.push(worker);
  return worker;
}

async function until(check: () => boolean | Promise<boolean>, withinMs = 60_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(50);
  }
}

interface Line {
  msg: string;
  shop?: string;
  job?: string;
  [key: string]: unknown;
}

function lines(worker: WorkerProcess): Line[] {
  return worker.lines.map((line) => JSON.parse(line) as Line);
}

/** The shops whose jobs a worker process completed. */
function completedBy(worker: WorkerProcess): string[] {
  return lines(worker)
    .filter((line) => line.msg === 'job completed')
    .map((line) => line.shop as string)
    .sort();
}

function summaries(stdout: string): Array<{ shop: string; status: string; items: number; run: number }> {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

async function finished(queue: Queue, id: string): Promise<Job> {
  let job: Job | undefined;
  await until(async () => {
    job = await queue.getJob(id);
    return job !== undefined && (job.finishedOn ?? 0) > 0;
  });
  return job as Job;
}

describe('a worker of many shops', () => {
  it('serves 40 shops, notifications on, on at most 5 Redis connections, and syncs them all', async () => {
    const receiver = await new Receiver().start();
    try {
      const shops = Array.from({ length: 40 }, (_, i) => `shop-${i + 1}`);
      const env = fleetEnv('forty', shops, { notify_url: receiver.url });
      const worker = await startWorker({ ...env, WORKER_CONCURRENCY: '4' });

      const port = Number(new URL(TEST_REDIS_URL).port || 6379);
      expect(connectionsTo(worker.child.pid as number, port)).toBeLessThanOrEqual(5);
      const result = await runCli(['trigger', '--all', '--wait', '--json'], env);

      expect(result.code).toBe(0);
      const done = summaries(result.stdout);
      expect(done.map((one) => one.shop).sort()).toEqual([...shops].sort());
      for (const one of done) expect(one).toMatchObject({ status: 'complete', items: 60, run: 1 });
      expect(connectionsTo(worker.child.pid as number, port)).toBeLessThanOrEqual(5);
      await until(() => receiver.received.length === 40);
    } finally {
      await receiver.stop();
    }
  }, 180_000);

  it("syncs its shops over the process's connections to the marketplace, and closes them as it stops", async () => {
    const shops = Array.from({ length: 6 }, (_, i) => `shop-${i + 1}`);
    // Two syncs at once, each with one request in flight and one connection more for a login: 4 in all.
    const env = fleetEnv('shared', shops, { max_in_flight: 1 });
    const worker = await startWorker({ ...env, WORKER_CONCURRENCY: '2' });
    const before = sim.stats().connections;

    const result = await runCli(['trigger', '--all', '--wait', '--json'], env);

    expect(result.code).toBe(0);
    expect(summaries(result.stdout).map((one) => one.status)).toEqual(shops.map(() => 'complete'));
    // A sync that opened connections of its own would have opened at least one each.
    expect(sim.stats().connections - before).toBeLessThanOrEqual(4);
    expect(await worker.stop()).toBe(0);
    expect(lines(worker).at(-1)?.msg).toBe('worker stopped');
  }, 120_000);

  it('sends a follow-up taken while its shop syncs back to wait without spending an attempt', async () => {
    const env = fleetEnv('one', ['main']);
    const worker = await startWorker({ ...env, WORKER_CONCURRENCY: '2' });
    // Every request takes 5 s until the follow-up has found the shop busy: the first sync runs meanwhile.
    sim.setFaults({ latencyMs: 5_000 });
    const running = JSON.parse((await runCli(['trigger', '--json'], env)).stdout);
    await until(() => lines(worker).some((line) => line.msg === 'job started'));

    const followUp = runCli(['trigger', '--wait', '--json'], env);
    await until(() =>
      lines(worker).some((line) => line.msg === 'shop busy; the job waits for its sync to end'),
    );
    sim.setFaults({ latencyMs: 0 });
    const result = await followUp;

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ shop: 'main', run: 2, status: 'complete' });
    const queue = queues.syncOf(groupOf(['main']));
    expect((await finished(queue, running.job)).returnvalue).toMatchObject({ run: 1, status: 'complete' });
    const [second] = (await queue.getJobs(['completed'])).filter((job) => job.id !== running.job);
    expect(second?.attemptsMade).toBe(1);
    expect(lines(worker).filter((line) => line.msg === 'job failed')).toEqual([]);
  }, 120_000);
});

describe('groups of workers on one Redis', () => {
  it('send each shop to a worker that has it, and a shop moved to another group takes its waiting sync along', async () => {
    const all = fleetEnv('all', ['north', 'east', 'south']);
    const first = await startWorker(fleetEnv('first', ['north', 'east']));
    const second = await startWorker(fleetEnv('second', ['south']));

    const synced = await runCli(['trigger', '--all', '--wait', '--json'], all);

    expect(synced.code).toBe(0);
    expect(summaries(synced.stdout).map((one) => one.status)).toEqual(['complete', 'complete', 'complete']);
    expect(completedBy(first)).toEqual(['east', 'north']);
    expect(completedBy(second)).toEqual(['south']);

    // East moves to the second group. Its first group stops with a sync of each of its shops waiting.
    await first.stop();
    const left = {
      north: (await enqueueSync(queues.syncOf(groupOf(['north', 'east'])), 'north')).job.id as string,
      east: (await enqueueSync(queues.syncOf(groupOf(['north', 'east'])), 'east')).job.id as string,
    };
    await second.stop();
    const moved = await startWorker(fleetEnv('moved', ['south', 'east']));

    const east = await finished(queues.syncOf(groupOf(['south', 'east'])), left.east);
    expect(east.returnvalue).toMatchObject({ shop: 'east', run: 2, status: 'complete' });
    await until(() => completedBy(moved).length > 0);
    expect(completedBy(moved)).toEqual(['east']);
    const alone = await runCli(['trigger', '--shop', 'north'], all);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain('No worker is connected for shop north');
    const status = JSON.parse((await runCli(['status', '--json'], all)).stdout);
    expect(status.waiting.map((job: { shop: string; id: string }) => [job.shop, job.id])).toEqual([
      ['north', left.north],
    ]);
    expect(
      status.shops.map((shop: { shop: string; group: string | null }) => [shop.shop, shop.group]),
    ).toEqual([
      ['north', null],
      ['east', groupOf(['south', 'east'])],
      ['south', groupOf(['south', 'east'])],
    ]);

    const north = await startWorker(fleetEnv('north', ['north']));
    const adopted = await finished(queues.syncOf(groupOf(['north'])), left.north);
    expect(adopted.returnvalue).toMatchObject({ shop: 'north', run: 2, status: 'complete' });
    await until(() => completedBy(north).length > 0);
    expect(completedBy(north)).toEqual(['north']);
    const again = await runCli(['trigger', '--all', '--wait', '--json'], all);
    expect(summaries(again.stdout).map((one) => [one.shop, one.run])).toEqual(
      expect.arrayContaining([
        ['north', 3],
        ['east', 3],
        ['south', 2],
      ]),
    );
  }, 120_000);
});

describe('an upgrade from one queue per shop', () => {
  it('runs the syncs and delivers the notifications that waited in the old queues, and deletes them', async () => {
    const receiver = await new Receiver().start();
    try {
      const env = fleetEnv('upgrade', ['main'], { notify_url: receiver.url });
      // What the version before groups left in Redis: a sync queued in the shop's own queue as its
      // `trigger` queued it, and a notification its worker had not delivered yet.
      const oldSyncs = new Queue(legacySyncQueueName('main'), { connection: redis, prefix });
      const oldNotes = new Queue(legacyNotifyQueueName('main'), { connection: redis, prefix });
      const waiting = await oldSyncs.add(
        SYNC_JOB,
        { shop: 'main' },
        { ...SYNC_JOB_OPTIONS, jobId: 'main-before-groups', deduplication: { id: 'main' } },
      );
      const delivery = 'main:7:sync.complete';
      const body = JSON.stringify({ shop: 'main', run: 7, event: 'sync.complete' });
      await oldNotes.add(
        DELIVER_JOB,
        { shop: 'main', event: 'sync.complete', delivery, body },
        { jobId: delivery.replaceAll(':', '@'), attempts: 1000 },
      );
      await Promise.all([oldSyncs.close(), oldNotes.close()]);

      await startWorker(env);

      const ran = await finished(queues.syncOf(groupOf(['main'])), waiting.id as string);
      expect(ran.returnvalue).toMatchObject({ shop: 'main', run: 1, status: 'complete', items: 60 });
      await until(() => receiver.received.some((one) => one.headers['x-shop-sync-delivery'] === delivery));
      expect(receiver.received.find((one) => one.headers['x-shop-sync-delivery'] === delivery)?.body).toBe(
        body,
      );
      const oldKeys = await redis.keys(`${prefix}:${legacySyncQueueName('main')}:*`);
      const oldNoteKeys = await redis.keys(`${prefix}:${legacyNotifyQueueName('main')}:*`);
      expect([...oldKeys, ...oldNoteKeys]).toEqual([]);
    } finally {
      await receiver.stop();
    }
  });
});
