import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli, SYNC_JSON_KEYS } from '../helpers/cli.js';
import { configuredByFile, simulatorShopLines } from '../helpers/config-files.js';
import { Receiver } from '../helpers/receiver.js';
import { killAll, startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';
import { freePort, metricsOnce, sample } from '../jobs/ops/ops-fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../jobs/redis-fixtures.js';
import { simEnv, tempDir } from '../store/fixtures.js';

/**
 * The worker holds a mass removal as `sync` does: the job fails for good with the sentence, `/metrics`
 * counts it as `held`, `/healthz` says it for the shop, a `sync.held` notification goes out, and
 * `trigger --accept-removals` lets one run complete. `trigger --wait` reports a held run like `sync`:
 * its summary (`"status": "held"`) on stdout, the sentence on stderr, exit 1.
 */

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let receiver: Receiver;
let env: Record<string, string>;
let port: number;
const workers: WorkerProcess[] = [];

beforeEach(async () => {
  // A simulator per test: each starts from the same 300 items.
  sim = await startSimulator({ items: 300, seed: 323 });
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
  };
});
afterEach(async () => {
  await killAll(workers);
  await sim.close();
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

const inventoryOf = (shop: string) =>
  readFileSync(path.join(temp.dir, shop, 'feeds', 'inventory.csv'), 'utf8');

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
  const inventory = inventoryOf('shop');
  const gone = sim.mutate({ remove: 120 }).removed;

  const held = await runCli(['trigger', '--wait', '--json'], env);
  expect(held.code).toBe(1);
  const sentence =
    'run 2 would remove 120 of 300 items (40 %), more than SYNC_MAX_REMOVED allows by default (10 % and 10 items): held; the feeds are unchanged';
  // As `sync --json` prints it: the summary on stdout, the sentence last on stderr.
  const summary = JSON.parse(held.stdout);
  expect(Object.keys(summary)).toEqual(SYNC_JSON_KEYS);
  expect(summary).toMatchObject({ shop: 'shop', run: 2, status: 'held', items: 180, added: 0, removed: 120 });
  expect(held.stderr.endsWith(`\nshop-sync: Shop shop: ${sentence}.\n`), held.stderr).toBe(true);
  expect(inventoryOf('shop')).toBe(inventory);
  const runs = JSON.parse((await runCli(['runs', '--json'], env)).stdout) as {
    run: number;
    status: string;
  }[];
  expect(runs.map(({ run, status }) => ({ run, status }))).toEqual([
    { run: 1, status: 'complete' },
    { run: 2, status: 'held' },
  ]);

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

it('trigger --all --wait reports each shop like sync --all: a held one prints its summary, says its sentence and fails the command', async () => {
  const file = path.join(temp.dir, 'shops.yaml');
  // Both read the one simulator: north is held by the default rule, south removes whatever it must.
  const south = simulatorShopLines(sim, 'south', ['max_removed: none']);
  writeFileSync(file, ['shops:', ...simulatorShopLines(sim, 'north'), ...south].join('\n'));
  env = configuredByFile(env, file);
  workers.push(await startWorkerProcess(env));
  const first = await runCli(['trigger', '--all', '--wait', '--json'], env);
  expect(first.code, first.stderr).toBe(0);
  const north = inventoryOf('north');
  const gone = sim.mutate({ remove: 120 }).removed;

  const held = await runCli(['trigger', '--all', '--wait', '--json'], env);
  const text = await runCli(['trigger', '--all', '--wait'], env);

  expect(held.code).toBe(1);
  const summaries = held.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .sort((a, b) => a.shop.localeCompare(b.shop));
  for (const summary of summaries) expect(Object.keys(summary)).toEqual(SYNC_JSON_KEYS);
  expect(summaries).toMatchObject([
    { shop: 'north', run: 2, status: 'held', items: 180, removed: 120 },
    { shop: 'south', run: 2, status: 'complete', items: 180, removed: 120 },
  ]);
  const sentence = (run: number) =>
    `run ${run} would remove 120 of 300 items (40 %), more than SYNC_MAX_REMOVED allows by default (10 % and 10 items): held; the feeds are unchanged`;
  expect(held.stderr).toContain(`\nshop-sync: Shop north: ${sentence(2)}.\n`);
  expect(
    held.stderr.endsWith('\nshop-sync: 1 of 2 syncs failed (shop north), as said above.\n'),
    held.stderr,
  ).toBe(true);
  expect(inventoryOf('north')).toBe(north);
  expect(inventoryOf('south')).not.toContain(`\n${gone[0]},`);

  expect(text.code).toBe(1);
  expect(text.stdout).toContain(`Shop north: run 3 held in `);
  expect(text.stdout).toContain(
    `: ${sentence(3)}.\n180 items from 5 pages; completing it would have added 0, updated 0 and removed 120.\n`,
  );
  expect(text.stdout).toContain('Shop south: run 3 complete in ');
  expect(text.stderr).toContain(`\nshop-sync: Shop north: ${sentence(3)}.\n`);
});
