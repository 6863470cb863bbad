import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { type Job, Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { groupOf, syncQueueName, TICK_QUEUE } from '../../jobs/queue.js';
import { schedulerId } from '../../jobs/schedulers.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli, SYNC_JSON_KEYS } from '../helpers/cli.js';
import { configuredByFile, simulatorShopLines } from '../helpers/config-files.js';
import { killAll, startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../jobs/redis-fixtures.js';
import { simEnv, tempDir } from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
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
  sim.setFaults({ latencyMs: 0, rate5xx: 0, rate429: 0, retryAfter: 0 });
});
afterEach(async () => {
  await killAll(workers);
  await deletePrefix(env.SYNC_QUEUE_PREFIX as string);
  temp.cleanup();
});

/** Starts `shop-sync worker` with the test's settings and `extra`, killed after the test. */
async function startWorker(extra: Record<string, string> = {}): Promise<WorkerProcess> {
  const worker = await startWorkerProcess({ ...env, ...extra });
  workers.push(worker);
  return worker;
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(20);
}

/** Resolves once the worker has logged a line with message `msg`. */
function logged(worker: WorkerProcess, msg: string): Promise<void> {
  return until(() => messages(worker.lines).includes(msg));
}

/** The shop's sync jobs as BullMQ keeps them, read from Redis as `status` would. */
async function syncJobs(): Promise<Array<Job & { state: string }>> {
  const queue = new Queue(syncQueueName(groupOf(['shop'])), {
    connection: { url: TEST_REDIS_URL },
    prefix: env.SYNC_QUEUE_PREFIX,
  });
  try {
    const jobs = await queue.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed']);
    return await Promise.all(jobs.map(async (job) => Object.assign(job, { state: await job.getState() })));
  } finally {
    await queue.close();
  }
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
    const worker = await startWorker();

    const result = await runCli(['trigger', '--wait', '--json'], env);

    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(Object.keys(summary)).toEqual(SYNC_JSON_KEYS);
    expect(summary).toMatchObject({ shop: 'shop', run: 1, status: 'complete', items: 300, added: 300 });
    expect(result.stderr).toMatch(/^Queued a sync of shop shop \(job .+\)\. Waiting for it to finish\.\n$/);
    for (const line of worker.lines) expect(() => JSON.parse(line)).not.toThrow();
    // JSON.parse keeps the last of two equal keys: only the text shows a key written twice.
    const started = worker.lines.find((line) => line.includes('"msg":"sync started"')) ?? '';
    expect(started.match(/"shop":/g)).toEqual(['"shop":']);
    for (const line of worker.lines) expect(line.match(/"shop":/g)?.length ?? 0).toBeLessThanOrEqual(1);

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
    const first = await startWorker();
    const waiting = runCli(['trigger', '--wait', '--json'], env);
    await waitForCheckpoint(3);

    first.child.kill('SIGTERM');

    expect(await first.exited).toBe(0);
    // Back to waiting, not failed: the next worker takes it at once, without spending an attempt.
    expect(messages(first.lines)).not.toContain('job failed');
    sim.setFaults({ latencyMs: 0 });
    await startWorker();
    const result = await waiting;
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ run: 1, status: 'complete', items: 300 });
    expect(sim.stats().tokenRequests.password - grantsBefore).toBe(1);
  });

  it('queues one follow-up behind a running sync; with the marketplace hanging, SIGTERM stops within the grace, exit 0, no attempt spent', async () => {
    const worker = await startWorker({ SHUTDOWN_GRACE_SECONDS: '1' });
    sim.setFaults({ latencyMs: 20_000 });
    const running = JSON.parse((await runCli(['trigger', '--json'], env)).stdout);
    await logged(worker, 'job started');

    const followUp = await runCli(['trigger', '--json'], env);
    const again = await runCli(['trigger'], env);

    expect(JSON.parse(followUp.stdout)).toMatchObject({ shop: 'shop', deduplicated: false });
    const next = JSON.parse(followUp.stdout).job;
    expect(next).not.toBe(running.job);
    expect(again.stdout).toBe(
      `A sync of shop shop that has not started yet is already queued (job ${next}); it runs next.\n`,
    );

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(messages(worker.lines)).not.toContain('job failed');
    const jobs = await syncJobs();
    expect(jobs.map((job) => job.id).sort()).toEqual([running.job, next].sort());
    for (const job of jobs) {
      expect(job.state).toBe('waiting');
      expect(job.attemptsMade).toBe(0);
    }
  });

  it('with the marketplace refusing connections, SIGTERM stops within the grace and spends no attempt', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    closed.close();
    env.MARKETPLACE_BASE_URL = `http://127.0.0.1:${port}`;
    const worker = await startWorker({ SHUTDOWN_GRACE_SECONDS: '1' });
    await runCli(['trigger'], env);
    await logged(worker, 'job started');

    worker.child.kill('SIGTERM');

    expect(await worker.exited).toBe(0);
    expect(messages(worker.lines)).not.toContain('job failed');
    const [job] = await syncJobs();
    expect(job).toMatchObject({ state: 'waiting', attemptsMade: 0 });
  });

  it('trigger --wait reports a sync that started after it, not the one already running', async () => {
    sim.setFaults({ latencyMs: 30 });
    await startWorker();
    const running = JSON.parse((await runCli(['trigger', '--json'], env)).stdout);
    await waitForCheckpoint(2);

    const result = await runCli(['trigger', '--wait', '--json'], env);

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ shop: 'shop', run: 2, status: 'complete', items: 300 });
    const jobs = await syncJobs();
    expect(jobs.find((job) => job.id === running.job)?.returnvalue).toMatchObject({ run: 1 });
  });

  it('promotes a sync waiting in retry backoff to run now', async () => {
    // A wait asked for beyond the retry budget fails the attempt at once, whatever the machine's load;
    // the retry then has the whole budget (a budget cut short to fail fast would bound each request too).
    sim.setFaults({ rate429: 1, retryAfter: 3600 });
    const worker = await startWorker();
    const first = JSON.parse((await runCli(['trigger', '--json'], env)).stdout);
    await logged(worker, 'job failed');
    sim.setFaults({ rate429: 0, retryAfter: 0 });

    const result = await runCli(['trigger', '--wait', '--json', '--timeout', '20'], env);

    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`already queued (job ${first.job})`);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'complete', items: 300 });
  });

  it('trigger exits 1 at once when no worker serves the shop, and --timeout gives up waiting', async () => {
    const alone = await runCli(['trigger', '--wait'], env);

    expect(alone.code).toBe(1);
    expect(alone.stderr).toBe(
      `shop-sync: No worker is connected for shop shop (under prefix ${env.SYNC_QUEUE_PREFIX}): start \`shop-sync worker\` with the shop configured.\n`,
    );
    expect(await syncJobs()).toEqual([]);

    sim.setFaults({ latencyMs: 20_000 });
    await startWorker({ SHUTDOWN_GRACE_SECONDS: '0' });
    const waited = await runCli(['trigger', '--wait', '--timeout', '1'], env);

    expect(waited.code).toBe(1);
    expect(waited.stderr).toMatch(
      /\nshop-sync: Gave up waiting after 1 s; the sync of shop shop \(job .+\) goes on in the worker\.\n$/,
    );
  });

  it('trigger --all --wait --json queues every shop in one process and prints one object per line', async () => {
    const file = path.join(temp.dir, 'shops.yaml');
    const shops = ['north', 'south', 'west'].flatMap((name) => simulatorShopLines(sim, name));
    writeFileSync(file, ['shops:', ...shops].join('\n'));
    env = configuredByFile(env, file);
    await startWorker();

    const all = await runCli(['trigger', '--all', '--wait', '--json'], env);
    const two = await runCli(['trigger', '--shop', 'north', '--shop', 'west'], env);

    expect(all.code).toBe(0);
    const summaries = all.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(summaries.map((s) => s.shop).sort()).toEqual(['north', 'south', 'west']);
    for (const summary of summaries) {
      expect(Object.keys(summary)).toEqual(SYNC_JSON_KEYS);
      expect(summary).toMatchObject({ run: 1, status: 'complete', items: 300 });
    }
    expect(two.code).toBe(0);
    expect(two.stdout).toMatch(
      /^Queued a sync of shop north \(job .+\)\.\nQueued a sync of shop west \(job .+\)\.\n$/,
    );
  });

  it('trigger --all --wait --json prints a failed shop as sync --all --json does, the others complete', async () => {
    const file = path.join(temp.dir, 'shops.yaml');
    const refused = simulatorShopLines(sim, 'east').map((line) =>
      line.startsWith('    password:') ? '    password: not-the-password' : line,
    );
    writeFileSync(file, ['shops:', ...simulatorShopLines(sim, 'north'), ...refused].join('\n'));
    env = configuredByFile(env, file);
    await startWorker();

    const all = await runCli(['trigger', '--all', '--wait', '--json'], env);

    expect(all.code).toBe(1);
    const lines = all.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const byShop = Object.fromEntries(lines.map((line) => [line.shop, line]));
    expect(Object.keys(byShop).sort()).toEqual(['east', 'north']);
    expect(Object.keys(byShop.north)).toEqual(SYNC_JSON_KEYS);
    expect(byShop.north).toMatchObject({ status: 'complete', items: 300 });
    expect(Object.keys(byShop.east)).toEqual(['shop', 'status', 'error']);
    expect(byShop.east.status).toBe('failed');
    expect(byShop.east.error).toMatch(/refused/);
    expect(all.stderr).toMatch(/\nshop-sync: 1 of 2 syncs failed \(shop east\), as said above\.\n$/);
    expect(all.stdout + all.stderr).not.toContain('not-the-password');
  });

  it('the worker refuses to start, exit 2 naming the setting, when a shop cannot sync', async () => {
    const noMarketplace = await runCli(['worker'], {
      DATA_DIR: temp.dir,
      REDIS_URL: TEST_REDIS_URL,
      SYNC_QUEUE_PREFIX: env.SYNC_QUEUE_PREFIX as string,
    });
    const badSchedule = await runCli(['worker'], { ...env, SYNC_SCHEDULE: '*/99 * * *' });

    expect(noMarketplace.code).toBe(2);
    expect(noMarketplace.stderr).toBe(
      'shop-sync: MARKETPLACE_BASE_URL is not set for shop "default": a sync needs it.\n',
    );
    expect(badSchedule.code).toBe(2);
    expect(badSchedule.stderr).toBe(
      'shop-sync: SYNC_SCHEDULE="*/99 * * *" is invalid: expected a cron pattern such as */15 * * * *; it has 4 fields where 5 (or 6, with seconds first) are expected.\n',
    );
  });

  it('recovers a sync whose worker was killed (SIGKILL): another worker finds it stalled and resumes the run', async () => {
    // Small, slow pages: the sync is still reading when the kill comes, however loaded the machine.
    env.SYNC_PER_PAGE = '5';
    sim.setFaults({ latencyMs: 300 });
    const first = await startWorker();
    // The lock runs out 30 s after the kill and the stalled check runs every 15 s: well within 90 s.
    const waiting = runCli(['trigger', '--wait', '--json', '--timeout', '90'], env);
    await waitForCheckpoint(1);

    first.child.kill('SIGKILL');
    await first.exited;
    sim.setFaults({ latencyMs: 0 });
    const second = await startWorker();
    const result = await waiting;

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ run: 1, status: 'complete', items: 300 });
    expect(messages(second.lines)).toContain(
      'job stalled: its worker stopped renewing its lock; it runs again',
    );
    const resumed = second.lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'sync started');
    expect(resumed).toMatchObject({ run: 1, resumed: true });
  }, 150_000);

  it('logs a Redis outage as JSON lines with the error code and re-applies the lost schedules when Redis is back', async () => {
    const upstream = new URL(TEST_REDIS_URL);
    const sockets = new Set<Socket>();
    const proxy = createServer((client) => {
      const server = connect(Number(upstream.port || 6379), upstream.hostname);
      for (const socket of [client, server]) {
        sockets.add(socket);
        socket.on('error', () => socket.destroy());
        socket.on('close', () => sockets.delete(socket));
      }
      client.pipe(server).pipe(client);
      client.on('close', () => server.destroy());
      server.on('close', () => client.destroy());
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    const { port } = proxy.address() as AddressInfo;
    const worker = await startWorker({ REDIS_URL: `redis://127.0.0.1:${port}${upstream.pathname}` });
    const ticks = new Queue(TICK_QUEUE, {
      connection: { url: TEST_REDIS_URL },
      prefix: env.SYNC_QUEUE_PREFIX,
    });
    try {
      proxy.close();
      for (const socket of sockets) socket.destroy();
      await until(() => worker.lines.some((line) => /"code":"(ECONN\w+|ETIMEDOUT|EPIPE)"/.test(line)));
      await ticks.removeJobScheduler(schedulerId('shop'));
      proxy.listen(port, '127.0.0.1');
      await once(proxy, 'listening');
      await until(async () => (await ticks.getJobSchedulers()).length === 1);

      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
    } finally {
      await ticks.close();
      proxy.close();
      for (const socket of sockets) socket.destroy();
    }
    for (const line of worker.lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('trigger --wait exits 1 with the reason when the sync fails for good', async () => {
    env.MARKETPLACE_PASSWORD = 'not-the-password';
    await startWorker();

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
