import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { Receiver } from '../helpers/receiver.js';
import { killAll, startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';
import { freePort, metricsOnce, sample } from '../jobs/ops/ops-fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../jobs/redis-fixtures.js';
import { simEnv, tempDir } from '../store/fixtures.js';

/**
 * The worker holds a mass removal as `sync` does: the job fails for good with the sentence, `/metrics`
 * counts it as `held`, `/healthz` says it for the shop, a `sync.held` notification goes out, and
 * `trigger --accept-removals` lets one run complete.
 */

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let receiver: Receiver;
let env: Record<string, string>;
let port: number;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ items: 300, seed: 323 });
});
afterAll(() => sim.close());
beforeEach(async () => {
  temp = tempDir('shop-sync-worker-held-');
  receiver = await new Receiver().start();
  port = await freePort();
  env = {
    ...simEnv(sim, temp.dir),
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: uniquePrefix('held'),
    SYNC_PER_PAGE: '50',
    OPS_PORT: String(port),
    NOTIFY_URL: receiver.url,
    // The runs are numbered as the test triggers them: no scheduled sync may start one in between (the
    // default, every 15 minutes, did when the test crossed a quarter hour).
    SYNC_SCHEDULE: '0 0 1 1 *',
  };
});
afterEach(async () => {
  await killAll(workers);
  await receiver.stop();
  await deletePrefix(env.SYNC_QUEUE_PREFIX as string);
  temp.cleanup();
});

interface ShopHealth {
  held: string | null;
  last_complete_run: number | null;
}

async function shopHealth(): Promise<ShopHealth> {
  const body = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as {
    shops: Record<string, ShopHealth>;
  };
  return body.shops.shop as ShopHealth;
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let tries = 0; !(await check()); tries++) {
    if (tries > 200) throw new Error('gave up waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it('holds the run: trigger --wait exits 1 with the sentence, /metrics, /healthz, status and sync.held say so; --accept-removals completes it', async () => {
  workers.push(await startWorkerProcess(env));
  const first = await runCli(['trigger', '--wait', '--json'], env);
  expect(first.code, first.stderr).toBe(0);
  const gone = sim.mutate({ remove: 120 }).removed;

  const held = await runCli(['trigger', '--wait', '--json'], env);
  expect(held.code).toBe(1);
  const sentence =
    'run 2 would remove 120 of 300 items (40 %), more than SYNC_MAX_REMOVED allows by default (10 % and 10 items): held; the feeds are unchanged';
  expect(held.stderr).toContain(sentence);

  const metrics = await metricsOnce(
    port,
    (text) => sample(text, 'shop_sync_syncs_total', 'shop="shop",outcome="held"') === 1,
  );
  expect(sample(metrics, 'shop_sync_syncs_total', 'shop="shop",outcome="held"')).toBe(1);
  expect(sample(metrics, 'shop_sync_syncs_total', 'shop="shop",outcome="failed"')).toBe(0);
  expect(await shopHealth()).toMatchObject({ last_complete_run: 1, held: expect.stringContaining(sentence) });

  const status = await runCli(['status', '--json'], env);
  expect(status.stdout).toContain(sentence);

  await until(() => receiver.received.some((r) => r.headers['x-shop-sync-event'] === 'sync.held'));
  const notice = receiver.received.find((r) => r.headers['x-shop-sync-event'] === 'sync.held');
  expect(notice?.headers['x-shop-sync-delivery']).toBe('shop:2:sync.held');
  expect(JSON.parse(notice?.body ?? '{}')).toMatchObject({
    run: 2,
    status: 'held',
    removed: 120,
    feeds: null,
  });

  const accepted = await runCli(['trigger', '--accept-removals', '--wait', '--json'], env);
  expect(accepted.code, accepted.stderr).toBe(0);
  expect(JSON.parse(accepted.stdout)).toMatchObject({ run: 3, status: 'complete', items: 180, removed: 120 });
  expect(await shopHealth()).toMatchObject({ last_complete_run: 3, held: null });
  expect(gone).toHaveLength(120);

  sim.mutate({ restore: gone.slice(0, 5) });
  const after = await runCli(['trigger', '--wait', '--json'], env);
  expect(after.code, after.stderr).toBe(0);
});
