import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueSync, groupOf, syncQueueName, TICK_QUEUE } from '../../../jobs/queue.js';
import { startWorker, type WorkerHandle } from '../../../jobs/start-worker.js';
import { loadConfig } from '../../../src/config/app-config.js';
import { silentLogger } from '../../../src/log.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import type { SyncSummary } from '../../../src/sync/index.js';
import { launchChromium } from '../../helpers/chromium.js';
import { simEnv, tempDir } from '../../store/fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../redis-fixtures.js';
import { freePort } from './ops-fixtures.js';

/** Words on a control that would change a job or the queue. */
const CHANGING =
  /retry|clean|pause|resume|promote|delete|remove|add|empty|obliterate|duplicate|update|discard/i;

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let prefix: string;
let redis: Redis;
let worker: WorkerHandle;
let browser: Browser;
let port: number;
let summary: SyncSummary;
let jobId: string;
/** The sync queue of the simulator's shop, `shop`. */
const SHOP_QUEUE = syncQueueName(groupOf(['shop']));

beforeAll(async () => {
  sim = await startSimulator({ items: 40, seed: 3 });
  temp = tempDir('shop-sync-dashboard-');
  prefix = uniquePrefix('dashboard');
  port = await freePort();
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const config = loadConfig({
    ...simEnv(sim, temp.dir),
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: prefix,
    OPS_PORT: String(port),
  });
  worker = await startWorker(config, silentLogger());
  const events = new QueueEvents(SHOP_QUEUE, { connection: redis, prefix });
  try {
    await events.waitUntilReady();
    const { job } = await enqueueSync(worker.queues.syncOf(groupOf(['shop'])), 'shop');
    summary = await job.waitUntilFinished(events);
    jobId = job.id as string;
  } finally {
    await events.close();
  }
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await worker?.close();
  await redis?.quit();
  await sim?.close();
  if (prefix) await deletePrefix(prefix);
  temp?.cleanup();
});

/** The text, title and label of every visible button: what a user could press. */
async function visibleControls(page: Page): Promise<string[]> {
  const controls = page.locator('button:visible, [role="button"]:visible, [role="menuitem"]:visible');
  return controls.evaluateAll((nodes) =>
    nodes.map((node) =>
      [node.textContent, node.getAttribute('title'), node.getAttribute('aria-label')].join(' ').trim(),
    ),
  );
}

describe('the /queues dashboard in a browser', () => {
  it("shows the shop's queue with its completed sync, and the scheduler ticks' queue", async () => {
    const page = await browser.newPage();
    const overview = await page.goto(`http://127.0.0.1:${port}/queues`);
    expect(overview?.status()).toBe(200);
    await page.getByRole('link', { name: SHOP_QUEUE, exact: true }).first().waitFor();
    await page.getByRole('link', { name: TICK_QUEUE, exact: true }).first().waitFor();

    await page.goto(`http://127.0.0.1:${port}/queues/queue/${SHOP_QUEUE}?status=completed`);
    await page.getByText(jobId).waitFor();
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what a user sees
    const text = await page.locator('body').innerText();
    expect(text).toContain(`run:${summary.run}`);
    expect(text).toContain('status:"complete"');
    expect(text).toContain(`items:${summary.items}`);
  });

  it('offers no control that changes a job or the queue', async () => {
    const page = await browser.newPage();
    for (const path of ['/queues', `/queues/queue/${SHOP_QUEUE}?status=completed`]) {
      await page.goto(`http://127.0.0.1:${port}${path}`);
      await page.getByRole('link', { name: SHOP_QUEUE, exact: true }).first().waitFor();
      await page.waitForLoadState('networkidle');
      const controls = await visibleControls(page);
      expect(controls.length).toBeGreaterThan(0);
      expect(controls.filter((label) => CHANGING.test(label))).toEqual([]);
    }
  });
});
