import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { HOSTILE_ACCESS_TOKEN_SENTENCE } from '../helpers/hostile-tokens.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../jobs/redis-fixtures.js';
import { simEnv, tempDir } from '../store/fixtures.js';

const BUDGET_SECONDS = 3;

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let worker: ChildProcess | undefined;

beforeAll(async () => {
  sim = await startSimulator({ items: 40, seed: 9 });
  temp = tempDir('shop-sync-worker-permanent-');
  env = {
    ...simEnv(sim, temp.dir),
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: uniquePrefix('permanent-cli'),
    SYNC_RETRY_BUDGET_SECONDS: String(BUDGET_SECONDS),
    LOG_LEVEL: 'info',
  };
});
afterAll(async () => {
  if (worker && worker.exitCode === null && worker.signalCode === null) {
    worker.kill('SIGKILL');
    await once(worker, 'close');
  }
  await deletePrefix(env.SYNC_QUEUE_PREFIX as string);
  await sim?.close();
  temp?.cleanup();
});

/** `shop-sync worker` as a container runs it, resolved once it logged that it started. */
async function startWorkerProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.resolve('bin/shop-sync.js'), 'worker'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let seen = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      seen += chunk;
      if (seen.includes('"worker started"')) resolve();
    });
    child.on('close', (code) => reject(new Error(`worker exited with ${code}: ${seen}`)));
  });
  return child;
}

it('trigger --wait reports a hostile token as the job failing for good, within the retry budget', async () => {
  worker = await startWorkerProcess();
  sim.setFaults({ tokenValues: { accessToken: 'tok\r\nX-Injected: yes' } });
  const started = Date.now();
  const result = await runCli(['trigger', '--wait', '--timeout', '60'], env);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(HOSTILE_ACCESS_TOKEN_SENTENCE);
  expect(result.stderr).not.toContain('X-Injected');
  expect(Date.now() - started).toBeLessThan(BUDGET_SECONDS * 1000 + 5_000);
});
