import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli, SYNC_JSON_KEYS } from '../helpers/cli.js';
import { deletePrefix, requireRedis, TEST_REDIS_URL, uniquePrefix } from '../jobs/redis-fixtures.js';
import { simEnv, tempDir } from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  await requireRedis();
  sim = await startSimulator({ items: 300, seed: 21 });
});
afterAll(() => sim?.close());
beforeEach(() => {
  temp = tempDir('shop-sync-worker-cli-');
  env = {
    ...simEnv(sim, temp.dir),
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: uniquePrefix('cli'),
    SYNC_PER_PAGE: '20',
    LOG_LEVEL: 'info',
  };
  sim.setFaults({ latencyMs: 0 });
});
afterEach(async () => {
  for (const worker of workers.splice(0)) {
    if (worker.exitCode === null && worker.signalCode === null) {
      worker.kill('SIGKILL');
      await once(worker, 'close');
    }
  }
  await deletePrefix(env.SYNC_QUEUE_PREFIX as string);
  temp.cleanup();
});

interface RunningWorker {
  readonly child: ChildProcess;
  /** Every line the worker wrote to stderr so far. */
  readonly lines: string[];
  readonly exited: Promise<number | null>;
}

/** Starts `shop-sync worker` as a container would, resolving once it logged that it started. */
async function startWorkerProcess(): Promise<RunningWorker> {
  const child = spawn(process.execPath, [path.resolve('bin/shop-sync.js'), 'worker'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.push(child);
  const lines: string[] = [];
  const exited = once(child, 'close').then(([code]) => code as number | null);
  const started = new Promise<void>((resolve, reject) => {
    let buffered = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const complete = buffered.split('\n');
      buffered = complete.pop() ?? '';
      lines.push(...complete);
      if (complete.some((line) => line.includes('"worker started"'))) resolve();
    });
    exited.then((code) => reject(new Error(`worker exited with ${code}: ${lines.join('\n')}`)));
  });
  await started;
  return { child, lines, exited };
}

function messages(lines: readonly string[]): string[] {
  return lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
}

/** The highest checkpoint of a running run, read as an outside reader while the worker writes. */
async function waitForCheckpoint(page: number): Promise<void> {
  const file = shopPaths(temp.dir, 'shop').store;
  for (;;) {
    if (!existsSync(file)) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      continue;
    }
    try {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        const row = db.prepare('SELECT max(checkpoint_page) AS p FROM runs').get() as { p: number | null };
        if ((row.p ?? 0) >= page) return;
      } finally {
        db.close();
      }
    } catch (error) {
      // The worker may not have created its tables yet: that is "no checkpoint yet".
      if (!/no such table/.test(String(error))) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('shop-sync worker and trigger', () => {
  it('trigger --wait --json prints the sync JSON object; the worker logs JSON lines and stops on SIGTERM', async () => {
    const worker = await startWorkerProcess();

    const result = await runCli(['trigger', '--wait', '--json'], env);

    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(Object.keys(summary)).toEqual(SYNC_JSON_KEYS);
    expect(summary).toMatchObject({ shop: 'shop', run: 1, status: 'complete', items: 300, added: 300 });
    expect(result.stderr).toMatch(/^Queued a sync of shop shop \(job .+\)\. Waiting for it to finish\.\n$/);

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(messages(worker.lines)).toEqual(
      expect.arrayContaining(['worker started', 'job started', 'job completed', 'worker stopped']),
    );
    expect(worker.lines.join('\n')).not.toContain(sim.credentials.password);
  });

  it('on SIGTERM stops after a page and exits 0; a later worker resumes the run and logs in no more', async () => {
    sim.setFaults({ latencyMs: 40 });
    const grantsBefore = sim.stats().tokenRequests.password;
    const first = await startWorkerProcess();
    const waiting = runCli(['trigger', '--wait', '--json'], env);
    await waitForCheckpoint(3);

    first.child.kill('SIGTERM');

    expect(await first.exited).toBe(0);
    // Back to waiting, not failed: the next worker takes it at once, without spending an attempt.
    expect(messages(first.lines)).not.toContain('job failed');
    sim.setFaults({ latencyMs: 0 });
    await startWorkerProcess();
    const result = await waiting;
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ run: 1, status: 'complete', items: 300 });
    expect(sim.stats().tokenRequests.password - grantsBefore).toBe(1);
  });

  it('says so when a sync of the shop is already queued, and names the job', async () => {
    const first = await runCli(['trigger', '--json'], env);
    const second = await runCli(['trigger'], env);

    expect(first.code).toBe(0);
    const queued = JSON.parse(first.stdout);
    expect(queued).toMatchObject({ shop: 'shop', deduplicated: false });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(`A sync of shop shop is already queued or running (job ${queued.job}).\n`);
  });

  it('trigger --wait exits 1 with the reason when the sync fails for good', async () => {
    env.MARKETPLACE_PASSWORD = 'not-the-password';
    await startWorkerProcess();

    const result = await runCli(['trigger', '--wait'], env);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /shop-sync: The sync of shop shop \(job .+\) failed: .*(refused|rejected)/i,
    );
    expect(result.stderr).not.toContain('not-the-password');
    expect(result.stdout).toBe('');
  });

  it('trigger exits 1 with one sentence naming REDIS_URL when Redis does not answer', async () => {
    const result = await runCli(['trigger'], { ...env, REDIS_URL: 'redis://:s3cret@127.0.0.1:1' });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^shop-sync: Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1 \(REDIS_URL\) does not answer: .+\.\n$/,
    );
    expect(result.stderr).not.toContain('s3cret');
  });
});
