import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueueSync, groupOf, ShopQueues } from '../../jobs/queue.js';
import { startWorker, type WorkerHandle } from '../../jobs/start-worker.js';
import { type AppConfig, loadConfig } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { CREDENTIALS, issuedToken, sampleItem, startScripted } from '../api/scripted-server.js';
import { runCli } from '../helpers/cli.js';
import { HOSTILE_ACCESS_TOKEN_SENTENCE, HOSTILE_ACCESS_TOKENS } from '../helpers/hostile-tokens.js';
import { simEnv, tempDir } from '../store/fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from './redis-fixtures.js';

const BUDGET_SECONDS = 3;

let sim: Simulator;
let redis: Redis;
let temp: ReturnType<typeof tempDir>;
let prefix: string;
let queues: ShopQueues;
let worker: WorkerHandle | undefined;

beforeAll(async () => {
  sim = await startSimulator({ items: 40, seed: 7 });
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis?.quit();
  await sim?.close();
});
beforeEach(() => {
  temp = tempDir('shop-sync-permanent-');
  prefix = uniquePrefix('permanent');
  queues = new ShopQueues(redis, prefix, silentLogger());
});
afterEach(async () => {
  await worker?.close();
  worker = undefined;
  await queues.close();
  await deletePrefix(prefix);
  temp.cleanup();
});

function configFor(env: Record<string, string>): AppConfig {
  return loadConfig({
    ...env,
    DATA_DIR: temp.dir,
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: prefix,
    SYNC_RETRY_BUDGET_SECONDS: String(BUDGET_SECONDS),
  });
}

/** Enqueues a sync of `shop` and waits until its (first) attempt has ended: failed, or delayed for a retry. */
async function attemptOnce(shop: string): Promise<{ job: Job; ms: number }> {
  const { job } = await enqueueSync(queues.syncOf(groupOf([shop])), shop);
  for (;;) {
    const state = await job.getState();
    if (state === 'failed' || state === 'delayed' || state === 'completed') break;
    await sleep(20);
  }
  const done = (await queues.syncOf(groupOf([shop])).getJob(job.id as string)) as Job;
  return { job: done, ms: (done.finishedOn ?? Date.now()) - (done.processedOn ?? 0) };
}

describe('a worker job against a token endpoint that hands out a token no header can carry', () => {
  it('fails for good, with the sentence naming the endpoint, well within its retry budget, for each kind', async () => {
    worker = await startWorker(configFor(simEnv(sim, temp.dir)), silentLogger());
    try {
      for (const [kind, token] of HOSTILE_ACCESS_TOKENS) {
        sim.setFaults({ tokenValues: { accessToken: token } });
        const { job, ms } = await attemptOnce('shop');
        expect(await job.getState(), kind).toBe('failed');
        expect(job.failedReason, kind).toBe(HOSTILE_ACCESS_TOKEN_SENTENCE);
        expect(ms, kind).toBeLessThan(BUDGET_SECONDS * 1000);
      }
    } finally {
      sim.setFaults({ tokenValues: null });
    }
  });
});

describe('a worker job that cannot reach the marketplace', () => {
  it('fails within seconds, naming MARKETPLACE_BASE_URL, when nothing ever answered at that address', async () => {
    const port = await closedPort();
    const env = { ...simEnv(sim, temp.dir), MARKETPLACE_BASE_URL: `http://127.0.0.1:${port}` };
    worker = await startWorker(configFor(env), silentLogger());
    const { job, ms } = await attemptOnce('shop');
    expect(await job.getState()).toBe('failed');
    expect(job.failedReason).toMatch(
      new RegExp(
        `^MARKETPLACE_BASE_URL is http://127\\.0\\.0\\.1:${port}, but nothing accepts connections at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED, after \\d+ attempts? in [\\d.]+ s \\(budget 3 s\\)\\); check the host and port`,
      ),
    );
    expect(ms).toBeLessThan(BUDGET_SECONDS * 1000 + 1000);
  });

  it('retries within its budget, in a new process, when the store shows that base URL gave the shop a complete run', async () => {
    const gone = await startSimulator({ items: 30, seed: 8 });
    const env = simEnv(gone, temp.dir);
    expect((await runCli(['sync'], env)).code).toBe(0);
    await gone.close();
    worker = await startWorker(configFor(env), silentLogger());
    const { job, ms } = await attemptOnce('shop');
    // An outage: retried for the budget, then the job waits for its next attempt.
    expect(await job.getState()).toBe('delayed');
    expect(job.failedReason).toMatch(
      /^POST \/v1\/oauth\/token failed after \d+ attempts in [\d.]+ s \(budget 3 s\): the marketplace at 127\.0\.0\.1:\d+ did not answer \(the connection was refused, ECONNREFUSED\)$/,
    );
    expect(ms).toBeGreaterThanOrEqual(BUDGET_SECONDS * 1000 - 1000);
  });

  it('still retries within its budget when the marketplace goes away in the middle of a run', async () => {
    let server: Awaited<ReturnType<typeof startScripted>> | undefined;
    server = await startScripted((request) => {
      if (request.url.pathname === '/v1/oauth/token') return issuedToken(1, { expires_in: 3600 });
      // Page 1 is full, so page 2 is due; then the marketplace goes away.
      setImmediate(() => void server?.close());
      const items = [sampleItem(server?.baseUrl ?? '', 'a'), sampleItem(server?.baseUrl ?? '', 'b')];
      return { status: 200, body: JSON.stringify(items) };
    });
    const env = {
      MARKETPLACE_BASE_URL: server.baseUrl,
      MARKETPLACE_CLIENT_ID: CREDENTIALS.clientId,
      MARKETPLACE_CLIENT_SECRET: CREDENTIALS.clientSecret,
      MARKETPLACE_USERNAME: CREDENTIALS.username,
      MARKETPLACE_PASSWORD: CREDENTIALS.password,
      SYNC_PER_PAGE: '2',
      SYNC_MAX_IN_FLIGHT: '1',
    };
    worker = await startWorker(configFor(env), silentLogger());
    const { job, ms } = await attemptOnce('default');
    // An outage: retried for the budget, then the job waits for its next attempt.
    expect(await job.getState()).toBe('delayed');
    expect(job.failedReason).toMatch(
      /^GET \/v1\/sell\/shop\/items\?page=\d+\S* failed after \d+ attempts in [\d.]+ s \(budget 3 s\): the marketplace at 127\.0\.0\.1:\d+ did not answer \(the connection was refused, ECONNREFUSED\)$/,
    );
    expect(job.failedReason).not.toMatch(/MARKETPLACE_BASE_URL/);
    expect(ms).toBeGreaterThanOrEqual(BUDGET_SECONDS * 1000 - 1000);
  });
});

/** A port on 127.0.0.1 with nothing listening: bound once by the OS, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  probe.close();
  await once(probe, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
