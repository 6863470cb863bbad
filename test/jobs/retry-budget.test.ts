import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { enqueueSync, groupOf, ShopQueues } from '../../jobs/queue.js';
import { startWorker, type WorkerHandle } from '../../jobs/start-worker.js';
import { loadConfig } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/log.js';
import {
  CREDENTIALS,
  issuedToken,
  type ScriptedServer,
  sampleItem,
  startScripted,
} from '../api/scripted-server.js';
import { NEVER_DURING_TESTS, tempDir } from '../store/fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from './redis-fixtures.js';

const BUDGET_SECONDS = 2;
const PER_PAGE = 2;

let redis: Redis;
let server: ScriptedServer;
let worker: WorkerHandle | undefined;
const prefix = uniquePrefix('budget');
const temp = tempDir('shop-sync-budget-');

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  let grants = 0;
  // The first login works and so does page 1 (full, so the reader reads ahead); then the token is
  // refused on every page and the token endpoint is down: every request in flight waits on one renewal.
  server = await startScripted((request) => {
    if (request.url.pathname === '/v1/oauth/token') {
      grants += 1;
      return grants === 1 ? issuedToken(1, { expires_in: 3600 }) : { status: 503, body: '{"error":"down"}' };
    }
    if (request.url.searchParams.get('page') === '1') {
      const items = [sampleItem(server.baseUrl, 'a'), sampleItem(server.baseUrl, 'b')];
      return { status: 200, body: JSON.stringify(items) };
    }
    return { status: 401, body: '{"error":"invalid_token"}' };
  });
});
afterAll(async () => {
  await worker?.close();
  await server?.close();
  await redis?.quit();
  await deletePrefix(prefix);
  temp.cleanup();
});

it('a job whose requests all wait on one failing renewal fails within the retry budget', async () => {
  const config = loadConfig({
    DATA_DIR: temp.dir,
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: prefix,
    SYNC_PER_PAGE: String(PER_PAGE),
    SYNC_RETRY_BUDGET_SECONDS: String(BUDGET_SECONDS),
    MARKETPLACE_BASE_URL: server.baseUrl,
    MARKETPLACE_CLIENT_ID: CREDENTIALS.clientId,
    MARKETPLACE_CLIENT_SECRET: CREDENTIALS.clientSecret,
    MARKETPLACE_USERNAME: CREDENTIALS.username,
    MARKETPLACE_PASSWORD: CREDENTIALS.password,
    SYNC_SCHEDULE: NEVER_DURING_TESTS,
  });
  worker = await startWorker(config, silentLogger());
  const queues = new ShopQueues(redis, prefix, silentLogger());
  try {
    const { job } = await enqueueSync(queues.syncOf(groupOf(['default'])), 'default');
    // The failed attempt goes to retry backoff: the job is then delayed, with no finishing time of its own.
    while ((await job.getState()) !== 'delayed') await sleep(20);
    const ended = Date.now();
    const done = await queues.syncOf(groupOf(['default'])).getJob(job.id as string);

    const inFlight = server.listingPages().filter((page) => page > 1);
    // How many pages the reader has in flight adapts to timing; usually several wait on the renewal.
    expect(new Set(inFlight).size).toBeGreaterThanOrEqual(1);
    expect(done?.failedReason).toMatch(/budget/);
    // Generous against scheduling noise; a renewal retried once per waiting request takes a multiple.
    expect(done?.processedOn).toBeGreaterThan(0);
    expect(ended - (done?.processedOn ?? ended)).toBeLessThan(2 * BUDGET_SECONDS * 1000);
  } finally {
    await queues.close();
  }
});
