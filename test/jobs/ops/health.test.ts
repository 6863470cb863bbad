import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HealthCheck } from '../../../jobs/ops/health.js';
import { OpsMetrics } from '../../../jobs/ops/metrics.js';
import { type OpsServer, startOpsServer } from '../../../jobs/ops/ops-server.js';
import { syncQueueName, TICK_QUEUE } from '../../../jobs/queue.js';
import { loadConfig } from '../../../src/config/app-config.js';
import { silentLogger } from '../../../src/log.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../redis-fixtures.js';

const config = loadConfig({ SHOP_NAME: 'north', OPS_PORT: '0' });
let prefix: string;
let redis: Redis;
let queue: Queue;
let worker: Worker;
let ticks: Worker;
let server: OpsServer;

beforeEach(async () => {
  prefix = uniquePrefix('health');
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  queue = new Queue(syncQueueName('north'), { connection: redis, prefix });
  worker = new Worker(syncQueueName('north'), async () => 'done', { connection: redis, prefix });
  ticks = new Worker(TICK_QUEUE, async () => 'done', { connection: redis, prefix });
  await Promise.all([worker.waitUntilReady(), ticks.waitUntilReady()]);
});
afterEach(async () => {
  await server?.close();
  await Promise.all([worker.close(), ticks.close()]);
  await queue.close();
  if (redis.status === 'ready') await redis.quit();
  await deletePrefix(prefix);
});

async function healthz(health: HealthCheck): Promise<{ status: number; body: Record<string, unknown> }> {
  server = await startOpsServer(0, {
    host: '127.0.0.1',
    health,
    metrics: new OpsMetrics(config),
    queues: [queue],
    log: silentLogger(),
  });
  const response = await fetch(`http://127.0.0.1:${server.port}/healthz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('/healthz', () => {
  it("answers 503 naming the reason when one of the worker's queues takes no jobs", async () => {
    const health = new HealthCheck(config, redis, [worker, ticks]);
    expect((await health.report()).status).toBe('ok');
    await worker.pause();
    const { status, body } = await healthz(health);
    expect(status).toBe(503);
    expect(body).toMatchObject({
      status: 'unavailable',
      reason: 'the worker is not taking jobs (stopping or paused).',
      redis: 'ok',
    });
  });

  it('answers 503 naming Redis when it does not answer', async () => {
    const lost = new Redis(TEST_REDIS_URL, { lazyConnect: true });
    const { status, body } = await healthz(new HealthCheck(config, lost, [worker, ticks]));
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: 'unavailable', redis: 'not answering', worker: 'taking jobs' });
    expect(body.reason).toBe('Redis does not answer within 1000 ms.');
  });

  it('reports a shop without a recent complete run as overdue and stays healthy', async () => {
    const health = new HealthCheck(config, redis, [worker]);
    const finishedAt = new Date('2026-11-22T00:00:00Z');
    health.setLastRun('north', { run: 7, finishedAt, items: 10, invalid: 0 });
    const report = await health.report(new Date('2026-11-22T02:00:00Z'));
    expect(report.status).toBe('ok');
    expect(report.shops.north).toMatchObject({
      last_complete_run: 7,
      last_complete_at: '2026-11-22T00:00:00.000Z',
      age_seconds: 7200,
      overdue: true,
    });
  });
});

describe('OPS_PORT', () => {
  it('defaults to 9464, and a value that is no port is a configuration error naming it', () => {
    expect(loadConfig({ SHOP_NAME: 'north' }).opsPort).toBe(9464);
    expect(() => loadConfig({ SHOP_NAME: 'north', OPS_PORT: '70000' })).toThrow(
      /^OPS_PORT="70000" is invalid/,
    );
  });
});
