import { once } from 'node:events';
import { createServer } from 'node:net';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueueSync, groupOf, type ShopJobData, syncQueueName, TICK_QUEUE } from '../../../jobs/queue.js';
import { startWorker, type WorkerHandle } from '../../../jobs/start-worker.js';
import { markAnswered } from '../../../src/api/http/transport-failure.js';
import { type AppConfig, loadConfig } from '../../../src/config/app-config.js';
import { createLogger, silentLogger } from '../../../src/log.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import type { SyncSummary } from '../../../src/sync/index.js';
import { simEnv, tempDir } from '../../store/fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../redis-fixtures.js';
import { freePort, metricsOnce, sample } from './ops-fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let prefix: string;
let redis: Redis;
let queue: Queue<ShopJobData, SyncSummary>;
let events: QueueEvents;
let worker: WorkerHandle | undefined;
/** The sync queue of the simulator's shop, `shop`. */
const SHOP_QUEUE = syncQueueName(groupOf(['shop']));

beforeAll(async () => {
  sim = await startSimulator({ items: 90, seed: 12 });
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis.quit();
  await sim.close();
});
beforeEach(async () => {
  temp = tempDir('shop-sync-ops-');
  prefix = uniquePrefix('ops');
  queue = new Queue(SHOP_QUEUE, { connection: redis, prefix });
  events = new QueueEvents(SHOP_QUEUE, { connection: redis, prefix });
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

function configWith(port: number, extra: Record<string, string> = {}): AppConfig {
  return loadConfig({
    ...simEnv(sim, temp.dir),
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: prefix,
    SYNC_PER_PAGE: '30',
    OPS_PORT: String(port),
    ...extra,
  });
}

async function get(port: number, path: string): Promise<{ status: number; type: string; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    body: await response.text(),
  };
}

describe("the worker's ops port", () => {
  it('reports health, and counts a completed sync in /metrics and /healthz', async () => {
    const port = await freePort();
    // Hourly, half an hour away: no scheduled sync joins the one the test counts.
    const schedule = `${(new Date().getMinutes() + 30) % 60} * * * *`;
    worker = await startWorker(configWith(port, { SYNC_SCHEDULE: schedule }), silentLogger());

    const before = await get(port, '/healthz');
    expect(before.status).toBe(200);
    const idle = JSON.parse(before.body);
    expect(idle).toMatchObject({ status: 'ok', redis: 'ok', worker: 'taking jobs' });
    expect(idle.shops.shop).toMatchObject({
      schedule,
      last_complete_run: null,
      overdue: false,
    });

    const { job } = await enqueueSync(queue, 'shop');
    const summary = await job.waitUntilFinished(events);

    const completed = (text: string) =>
      sample(text, 'shop_sync_syncs_total', 'shop="shop",outcome="complete"') === 1;
    await metricsOnce(port, completed);
    const health = JSON.parse((await get(port, '/healthz')).body);
    expect(health.shops.shop).toMatchObject({ last_complete_run: summary.run, overdue: false });
    expect(health.shops.shop.overdue_after_seconds).toBe(3 * 60 * 60);

    const metrics = await get(port, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.type).toContain('text/plain');
    const text = metrics.body;
    expect(sample(text, 'shop_sync_syncs_total', 'shop="shop",outcome="complete"')).toBe(1);
    expect(sample(text, 'shop_sync_syncs_total', 'shop="shop",outcome="failed"')).toBe(0);
    expect(sample(text, 'shop_sync_items', 'shop="shop"')).toBe(90);
    expect(sample(text, 'shop_sync_items_invalid', 'shop="shop"')).toBe(0);
    expect(sample(text, 'shop_sync_sync_duration_seconds_count', 'shop="shop",outcome="complete"')).toBe(1);
    expect(sample(text, 'shop_sync_marketplace_tokens_total', 'shop="shop",grant="password"')).toBe(1);
    // 90 items at 30 a page: pages 1-3 answer 200; the page past the end may answer 200 (empty) or 404.
    expect(
      sample(text, 'shop_sync_marketplace_responses_total', 'shop="shop",status="200"'),
    ).toBeGreaterThanOrEqual(4);
    // BullMQ's families of every queue of the worker (the shop's syncs, the ticks), each family once.
    expect(text).toMatch(
      new RegExp(`^bullmq_job_count\\{queue="${SHOP_QUEUE}", state="completed"\\} 1$`, 'm'),
    );
    expect(text).toMatch(
      new RegExp(`^bullmq_job_count\\{queue="${TICK_QUEUE}", state="completed"\\} \\d+$`, 'm'),
    );
    const names = [...text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1] as string);
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((name) => !name.startsWith('bullmq_')).every((n) => n.startsWith('shop_sync_'))).toBe(
      true,
    );
    expect(text).toMatch(/^shop_sync_process_resident_memory_bytes \d+/m);
    expect(text).not.toContain(sim.credentials.password);
  });

  it('reads the last complete run from the store at start-up', async () => {
    const port = await freePort();
    const config = configWith(port);
    worker = await startWorker(config, silentLogger());
    const { job } = await enqueueSync(queue, 'shop');
    const summary = await job.waitUntilFinished(events);
    await worker.close();

    worker = await startWorker(config, silentLogger());
    const health = JSON.parse((await get(port, '/healthz')).body);
    expect(health.shops.shop.last_complete_run).toBe(summary.run);
    const metrics = (await get(port, '/metrics')).body;
    expect(sample(metrics, 'shop_sync_items', 'shop="shop"')).toBe(90);
  });

  it('counts a sync refused for its credentials as failed, without retrying', async () => {
    const port = await freePort();
    worker = await startWorker(configWith(port, { MARKETPLACE_PASSWORD: 'wrong' }), silentLogger());
    const { job } = await enqueueSync(queue, 'shop');
    await expect(job.waitUntilFinished(events)).rejects.toThrow(/MARKETPLACE_PASSWORD|credentials|refused/i);
    const metrics = await metricsOnce(port, (text) => text.includes('outcome="failed"} 1'));
    expect(sample(metrics, 'shop_sync_syncs_total', 'shop="shop",outcome="failed"')).toBe(1);
    expect(sample(metrics, 'shop_sync_syncs_total', 'shop="shop",outcome="complete"')).toBe(0);
    expect(metrics).not.toContain('wrong');
  });

  it('counts a sync that cannot reach the marketplace as retrying, and its requests as network failures', async () => {
    const port = await freePort();
    const closed = await freePort();
    const config = configWith(port, {
      MARKETPLACE_BASE_URL: `http://127.0.0.1:${closed}`,
      SYNC_RETRY_BUDGET_SECONDS: '0.5',
    });
    // An outage, not a wrong setting: this process had answers from that address before.
    markAnswered(`http://127.0.0.1:${closed}`);
    worker = await startWorker(config, silentLogger());
    const delayed = new Promise<void>((resolve) => events.once('delayed', () => resolve()));
    const { job } = await enqueueSync(queue, 'shop');
    await delayed;
    expect(await job.getState()).toBe('delayed');
    const metrics = await metricsOnce(port, (text) => text.includes('outcome="retrying"} 1'));
    expect(sample(metrics, 'shop_sync_syncs_total', 'shop="shop",outcome="retrying"')).toBe(1);
    expect(
      sample(metrics, 'shop_sync_marketplace_responses_total', 'shop="shop",status="network"'),
    ).toBeGreaterThan(0);
    expect(
      sample(metrics, 'shop_sync_marketplace_tokens_total', 'shop="shop",grant="password"'),
    ).toBeUndefined();
  });

  it('answers only GET and HEAD, and 404 elsewhere', async () => {
    const port = await freePort();
    worker = await startWorker(configWith(port), silentLogger());
    const post = await fetch(`http://127.0.0.1:${port}/queues/api/queues/${SHOP_QUEUE}/pause`, {
      method: 'PUT',
    });
    expect(post.status).toBe(405);
    expect((await get(port, '/nothing')).status).toBe(404);
  });

  it('keeps syncing when OPS_PORT is taken, and says so in the log', async () => {
    const blocker = createServer();
    blocker.listen(0);
    await once(blocker, 'listening');
    const port = (blocker.address() as { port: number }).port;
    const lines: string[] = [];
    const log = createLogger('info', { write: (line: string) => lines.push(line) });
    try {
      worker = await startWorker(configWith(port), log);
      const { job } = await enqueueSync(queue, 'shop');
      await expect(job.waitUntilFinished(events)).resolves.toMatchObject({ status: 'complete' });
      const error = lines.map((l) => JSON.parse(l)).find((entry) => entry.level === 50);
      expect(error?.msg).toBe(`OPS_PORT ${port} cannot be served`);
      expect(error?.err?.code).toBe('EADDRINUSE');
    } finally {
      blocker.close();
    }
  });

  it('is off with OPS_PORT=0', async () => {
    const lines: string[] = [];
    const log = createLogger('info', { write: (line: string) => lines.push(line) });
    worker = await startWorker(configWith(0), log);
    expect(lines.some((l) => l.includes('ops port listening'))).toBe(false);
  });
});
