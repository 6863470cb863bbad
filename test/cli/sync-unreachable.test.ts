import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli } from '../helpers/cli.js';
import { simEnv, tempDir } from '../store/fixtures.js';

const BUDGET_SECONDS = 3;

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
beforeAll(async () => {
  sim = await startSimulator({ items: 120, seed: 5 });
  temp = tempDir('shop-sync-unreachable-');
});
afterAll(() => temp.cleanup());

it('an outage: a base URL that answered this shop before and stops answering is retried for the budget, exits 1 saying the marketplace did not answer, keeping the data', async () => {
  const env = simEnv(sim, temp.dir);
  expect((await runCli(['sync'], env)).code).toBe(0);
  const feed = shopPaths(temp.dir, 'shop').inventoryCsv;
  const before = readFileSync(feed);
  await sim.close();

  // A new process: only the store remembers that this base URL gave the shop a complete run.
  const started = Date.now();
  const result = await runCli(['sync'], {
    ...env,
    SYNC_RETRY_BUDGET_SECONDS: String(BUDGET_SECONDS),
    LOG_LEVEL: 'error',
  });
  const ms = Date.now() - started;
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(
    /^shop-sync: POST \/v1\/oauth\/token failed after \d+ attempts in [\d.]+ s \(budget 3 s\): the marketplace at 127\.0\.0\.1:\d+ did not answer \(the connection was refused, ECONNREFUSED\)\n$/,
  );
  expect(result.stderr).not.toMatch(/MARKETPLACE_BASE_URL/);
  // Retried for the budget: the last attempt leaves only what one more could not use.
  expect(ms).toBeGreaterThanOrEqual(BUDGET_SECONDS * 1000 - 1000);

  const runs = await runCli(['runs', '--json'], env);
  const statuses = (JSON.parse(runs.stdout) as { run: number; status: string }[]).map((r) => r.status);
  expect(statuses).toEqual(['complete', 'failed']);
  const exported = await runCli(['export'], env);
  expect(Buffer.from(exported.stdout)).toEqual(before);
  expect(readFileSync(feed)).toEqual(before);
});
