import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueueSync, groupOf, notifyQueueName, ShopQueues, syncQueueName } from '../../jobs/queue.js';
import { startWorker } from '../../jobs/start-worker.js';
import { loadConfig } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { type Received, Receiver, validSignature } from '../helpers/receiver.js';
import { killAll, startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';
import { simEnv, tempDir } from '../store/fixtures.js';
import { freePort, metricsOnce, sample } from './ops/ops-fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from './redis-fixtures.js';

const SECRET = 'worker-notify-secret';
let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let redis: Redis;
let receiver: Receiver;
let prefix: string;
const processes: WorkerProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ items: 80, seed: 17 });
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis.quit();
  await sim.close();
});
beforeEach(async () => {
  temp = tempDir('shop-sync-notify-worker-');
  prefix = uniquePrefix('notify');
  receiver = await new Receiver().start();
});
afterEach(async () => {
  await killAll(processes);
  await receiver.stop();
  await deletePrefix(prefix);
  temp.cleanup();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, withinMs = 30_000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

interface NotificationsJson {
  workers: number;
  notifications: {
    waiting: unknown[];
    retrying: { shop: string; delivery: string; event: string; attempts: number; reason: string }[];
    failed: unknown[];
  };
}

describe("the worker's notifications", () => {
  it('are retried through their own queue across a worker restart, under one delivery id, and never cost the sync', async () => {
    const opsPort = await freePort();
    const env = {
      ...simEnv(sim, temp.dir),
      REDIS_URL: TEST_REDIS_URL,
      SYNC_QUEUE_PREFIX: prefix,
      SYNC_PER_PAGE: '40',
      OPS_PORT: String(opsPort),
      NOTIFY_URL: receiver.url,
      NOTIFY_SECRET: SECRET,
    };
    // The receiver fails the first delivery, then goes away.
    receiver.answer = () => {
      setImmediate(() => void receiver.stop());
      return { status: 500 };
    };
    const first = await startWorkerProcess(env);
    processes.push(first);
    const queues = new ShopQueues(redis, prefix, silentLogger());
    const events = new QueueEvents(syncQueueName(groupOf(['shop'])), { connection: redis, prefix });
    try {
      await events.waitUntilReady();
      const { job } = await enqueueSync(queues.syncOf(groupOf(['shop'])), 'shop');
      const summary = await job.waitUntilFinished(events, 60_000);
      expect(summary).toMatchObject({ status: 'complete', items: 80 });
      const delivery = `shop:${summary.run}:sync.complete`;

      // Retrying, and seen so: in status, in /metrics and on the dashboard.
      const status = await until('the delivery retrying in status', async () => {
        const result = await runCli(['status', '--json'], env);
        const parsed = JSON.parse(result.stdout) as NotificationsJson;
        const retrying = parsed.notifications.retrying.find((d) => d.delivery === delivery);
        return retrying && retrying.attempts >= 2 ? parsed : undefined;
      });
      expect(status.notifications.retrying[0]).toMatchObject({ shop: 'shop', event: 'sync.complete' });
      expect(status.notifications.retrying[0]?.reason).toMatch(
        /^The notification to http:\/\/127\.0\.0\.1:\d+ could not be sent \(ECONNREFUSED\)\.$/,
      );
      const text = (await runCli(['status'], env)).stdout;
      expect(text).toMatch(
        new RegExp(`Notifications retrying:\\n.*\\n {2}shop +sync\\.complete +${delivery} `),
      );
      // Between two attempts the delivery is delayed; during one it is active for a moment.
      const delayed = new RegExp(
        `^bullmq_job_count\\{queue="${notifyQueueName(groupOf(['shop']))}", state="delayed"\\} 1$`,
        'm',
      );
      const metrics = await until('the delivery delayed in /metrics', async () => {
        const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
        return delayed.test(text) ? text : undefined;
      });
      expect(
        sample(metrics, 'shop_sync_notifications_total', 'shop="shop",outcome="retrying"'),
      ).toBeGreaterThanOrEqual(2);
      const board = await (await fetch(`http://127.0.0.1:${opsPort}/queues/api/queues`)).text();
      expect(board).toContain(notifyQueueName(groupOf(['shop'])));
      expect(board).not.toContain(SECRET);

      // The worker restarts while the receiver is away; the receiver comes back, taking it this time.
      expect(await first.stop()).toBe(0);
      receiver.answer = () => ({ status: 200 });
      await receiver.start();
      const second = await startWorkerProcess(env);
      processes.push(second);
      const taken = await until(
        'the delivery taken',
        async () => receiver.received.find((r, i) => i > 0 && r.headers['x-shop-sync-delivery'] === delivery),
        60_000,
      );
      expect(new Set(receiver.received.map((r) => r.headers['x-shop-sync-delivery']))).toEqual(
        new Set([delivery]),
      );
      expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
      expect(validSignature(taken as Received, SECRET)).toBe(true);
      expect(JSON.parse(taken.body)).toMatchObject({
        ...summary,
        event: 'sync.complete',
        error: null,
        feeds: 'shop/feeds',
      });
      const sent = JSON.stringify(receiver.received);
      for (const secret of [
        sim.credentials.password,
        sim.credentials.clientSecret,
        SECRET,
        ...sim.issuedTokens(),
      ])
        expect(sent).not.toContain(secret);
      const delivered = await metricsOnce(opsPort, (text) => text.includes('outcome="delivered"} 1'));
      expect(sample(delivered, 'shop_sync_notifications_total', 'shop="shop",outcome="delivered"')).toBe(1);
      await until('no notification pending', async () => {
        const parsed = JSON.parse((await runCli(['status', '--json'], env)).stdout) as NotificationsJson;
        const { waiting, retrying, failed } = parsed.notifications;
        return waiting.length + retrying.length + failed.length === 0 ? true : undefined;
      });
      expect(await second.stop()).toBe(0);
    } finally {
      await events.close();
      await queues.close();
    }
  }, 150_000);

  it('tell a failed sync as sync.failed, with its reason and nothing secret', async () => {
    const env = {
      ...simEnv(sim, temp.dir),
      REDIS_URL: TEST_REDIS_URL,
      SYNC_QUEUE_PREFIX: prefix,
      OPS_PORT: '0',
      NOTIFY_URL: receiver.url,
      MARKETPLACE_PASSWORD: 'not-the-password',
    };
    const worker = await startWorker(loadConfig(env), silentLogger());
    const events = new QueueEvents(syncQueueName(groupOf(['shop'])), { connection: redis, prefix });
    try {
      await events.waitUntilReady();
      const { job } = await enqueueSync(worker.queues.syncOf(groupOf(['shop'])), 'shop');
      const failure = await job.waitUntilFinished(events).catch((error: Error) => error);
      expect(failure).toBeInstanceOf(Error);
      const received = await until('sync.failed', async () => receiver.received[0]);
      expect(received.headers['x-shop-sync-event']).toBe('sync.failed');
      expect(received.headers['x-shop-sync-delivery']).toMatch(/^shop:\d+:sync\.failed$/);
      expect(received.headers['x-shop-sync-signature']).toBeUndefined();
      const body = JSON.parse(received.body);
      expect(body).toMatchObject({
        shop: 'shop',
        status: 'failed',
        feeds: null,
        error: (failure as Error).message,
      });
      expect(received.body).not.toContain('not-the-password');
    } finally {
      await events.close();
      await worker.close();
    }
  });
});
