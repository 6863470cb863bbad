import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli } from '../helpers/cli.js';
import { simEnv, tempDir } from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
beforeAll(async () => {
  sim = await startSimulator({ items: 120, seed: 5 });
  temp = tempDir('shop-sync-unreachable-');
});
afterAll(() => temp.cleanup());

it('fails with one sentence naming MARKETPLACE_BASE_URL when the marketplace no longer answers at its first request, keeping the data', async () => {
  const env = simEnv(sim, temp.dir);
  expect((await runCli(['sync'], env)).code).toBe(0);
  const feed = shopPaths(temp.dir, 'shop').inventoryCsv;
  const before = readFileSync(feed);
  await sim.close();

  // A process that never had an answer cannot tell an outage from a wrong port: after the few seconds
  // of first contact (less here: the budget is 1 s) it names the setting rather than spend the budget.
  const result = await runCli(['sync'], { ...env, SYNC_RETRY_BUDGET_SECONDS: '1', LOG_LEVEL: 'error' });
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(
    /^shop-sync: MARKETPLACE_BASE_URL is http:\/\/127\.0\.0\.1:\d+, but nothing accepts connections at 127\.0\.0\.1:\d+ \(ECONNREFUSED, after \d+ attempts? in [\d.]+ s \(budget 1 s\)\); check the host and port, and that the marketplace is running\.\n$/,
  );

  const runs = await runCli(['runs', '--json'], env);
  const statuses = (JSON.parse(runs.stdout) as { run: number; status: string }[]).map((r) => r.status);
  expect(statuses).toEqual(['complete', 'failed']);
  const exported = await runCli(['export'], env);
  expect(Buffer.from(exported.stdout)).toEqual(before);
  expect(readFileSync(feed)).toEqual(before);
});
