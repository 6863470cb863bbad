import type { ChildProcessByStdio } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { connectRedis } from '../jobs/redis.js';
import type { SimStats } from '../src/simulator/index.js';
import type { SyncSummary } from '../src/sync/index.js';
import type { BaselineShop, BaselineWork } from './baseline-client.js';
import { BASELINE, CLI, measure, readProbe, spawnProbed } from './child.js';
import { deleteKeysUnder } from './redis-keys.js';
import { type SimulatorProcess, startSimulatorProcess } from './simulator-process.js';

/** Syncs one worker process runs at once (WORKER_CONCURRENCY) and requests each keeps in flight. */
const WORKER_CONCURRENCY = 4;
export const MAX_IN_FLIGHT = 8;
export const LATENCY_MS = 30;
export const CLOCK_TICKS_PER_SECOND = 100;
/**
 * The machine's Redis, on a database of the bench's own: never 0, where a developer's own data may live,
 * nor the tests' 9. Every key a run writes is deleted when it ends.
 */
export const BENCH_REDIS_URL = 'redis://127.0.0.1:6379/10';

export interface FleetRound {
  name: string;
  /** From starting `trigger --all --wait` until it has reported every shop's complete run. */
  wallMs: number;
  itemsPerSecond: number;
  itemsPerSecondVsBaseline: number;
  cpuPerShopMs: number;
  cpuPerShopVsBaseline: number;
  /** Highest peak RSS of one worker process. */
  peakRssMiB: number;
  passwordLogins: number;
  /** Listing requests the simulator answered during the round, per shop: what a reader's checks cost. */
  listingRequestsPerShop: number;
  syncs: number;
}

export interface FleetWorkers {
  workers: number;
  /** Requests in flight at most, for the fleet and the baseline alike. */
  inFlight: number;
  baseline: { wallMs: number; itemsPerSecond: number; cpuPerShopMs: number; peakRssMiB: number };
  rounds: FleetRound[];
  loopMaxMs: number;
}

export interface FleetResult {
  shops: number;
  itemsPerShop: number;
  latencyMs: number;
  runs: FleetWorkers[];
}

export const round2 = (n: number) => Math.round(n * 100) / 100;

export function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

export function peakRssMiB(pid: number): number {
  const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Math.round((Number(kib) / 1024) * 10) / 10;
}

export function shopList(sim: SimulatorProcess, shops: number, items: number): BaselineShop[] {
  return Array.from({ length: shops }, (_, i) => ({
    baseUrl: `${sim.baseUrl}/shops/${i + 1}`,
    clientId: 'demo-client',
    clientSecret: 'demo-secret',
    username: `shop-${i + 1}-owner`,
    password: `shop-${i + 1}-password`,
    items,
  }));
}

/** A config file of every shop; schedules that never fire during a run. */
export function writeConfig(file: string, dataDir: string, shops: readonly BaselineShop[]): void {
  const entries = shops.map((shop, i) => [
    `shop-${i + 1}`,
    {
      base_url: shop.baseUrl,
      client_id: shop.clientId,
      client_secret: shop.clientSecret,
      username: shop.username,
      password: shop.password,
      per_page: 100,
      schedule: '0 0 1 1 *',
    },
  ]);
  writeFileSync(file, JSON.stringify({ data_dir: dataDir, shops: Object.fromEntries(entries) }));
}

export function startWorker(
  env: Record<string, string>,
): Promise<ChildProcessByStdio<null, Readable, Readable>> {
  const child = spawnProbed(CLI, ['worker'], env);
  let log = '';
  return new Promise((resolve, reject) => {
    child.stdout.resume();
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (log.includes('worker started')) return;
      log += chunk;
      if (log.includes('worker started')) resolve(child);
    });
    child.on('close', (code) =>
      reject(new Error(`a worker exited with ${code} before it started: ${log.slice(-2000)}`)),
    );
  });
}

export async function ended(child: ChildProcessByStdio<null, Readable, Readable>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((resolve) => child.on('close', resolve));
  child.kill('SIGTERM');
  await closed;
}

async function stopWorker(child: ChildProcessByStdio<null, Readable, Readable>): Promise<number> {
  await ended(child);
  return readProbe(child.pid as number).loopMaxMs;
}

interface Round {
  shops: readonly string[];
  items: number;
  sim: SimulatorProcess;
  workers: readonly ChildProcessByStdio<null, Readable, Readable>[];
  /** The workers' environment, which `trigger` shares. */
  env: Readonly<Record<string, string>>;
}

/**
 * Queues a sync of every shop as a user does, with one `trigger --all --wait --json` process, and
 * checks that each shop ended with a complete run of every item.
 */
async function syncAll(name: string, round: Round, baseline: FleetWorkers['baseline']): Promise<FleetRound> {
  const { shops, items, sim, workers, env } = round;
  const pids = workers.map((worker) => worker.pid as number);
  const statsBefore = await sim.stats();
  const loginsBefore = statsBefore.tokenRequests.password;
  const ticksBefore = pids.reduce((sum, pid) => sum + cpuTicks(pid), 0);
  const trigger = await measure(CLI, ['trigger', '--all', '--wait', '--json'], { env });
  const wallMs = trigger.wallMs;
  const cpuMs =
    ((pids.reduce((sum, pid) => sum + cpuTicks(pid), 0) - ticksBefore) * 1000) / CLOCK_TICKS_PER_SECOND;
  const summaries = trigger.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SyncSummary);
  const reported = new Set(summaries.map((summary) => summary.shop));
  const missing = shops.filter((shop) => !reported.has(shop));
  if (missing.length > 0) throw new Error(`${name}: trigger reported no sync of shop ${missing.join(', ')}`);
  for (const summary of summaries) {
    if (summary.status !== 'complete' || summary.items !== items) {
      throw new Error(
        `${name}: shop ${summary.shop} ended ${summary.status} with ${summary.items} of ${items} items`,
      );
    }
  }
  const itemsPerSecond = Math.round((shops.length * items * 1000) / wallMs);
  const cpuPerShopMs = Math.round(cpuMs / shops.length);
  return {
    name,
    wallMs,
    itemsPerSecond,
    itemsPerSecondVsBaseline: round2(itemsPerSecond / baseline.itemsPerSecond),
    cpuPerShopMs,
    cpuPerShopVsBaseline: round2(cpuPerShopMs / baseline.cpuPerShopMs),
    peakRssMiB: Math.max(...pids.map(peakRssMiB)),
    ...(await countedSince(sim, statsBefore, loginsBefore, shops.length)),
    syncs: shops.length,
  };
}

async function countedSince(
  sim: SimulatorProcess,
  before: SimStats,
  loginsBefore: number,
  shops: number,
): Promise<{ passwordLogins: number; listingRequestsPerShop: number }> {
  const after = await sim.stats();
  return {
    passwordLogins: after.tokenRequests.password - loginsBefore,
    listingRequestsPerShop: round2((after.listingRequests - before.listingRequests) / shops),
  };
}

async function withWorkers(
  sim: SimulatorProcess,
  shops: readonly BaselineShop[],
  count: number,
  root: string,
  redisUrl: string,
): Promise<FleetWorkers> {
  const inFlight = count * Math.min(WORKER_CONCURRENCY, shops.length) * MAX_IN_FLIGHT;
  const items = shops[0]?.items ?? 0;
  const shopsFile = path.join(root, `fleet-${count}-shops.json`);
  writeFileSync(shopsFile, JSON.stringify(shops));
  // Like the fleet's rounds, which start once the workers run: the client's work without its start-up.
  const figures = await measure(BASELINE, ['--shops', shopsFile, '--in-flight', String(inFlight)]);
  const work = JSON.parse(figures.stdout) as BaselineWork;
  const baseline = {
    wallMs: work.ms,
    itemsPerSecond: Math.round((shops.length * items * 1000) / work.ms),
    cpuPerShopMs: round2(work.cpuMs / shops.length),
    peakRssMiB: figures.peakRssMiB,
  };
  const prefix = `shop-sync-bench-${process.pid}-${count}-${Date.now()}`;
  const configFile = path.join(root, `fleet-${count}.json`);
  writeConfig(configFile, path.join(root, `fleet-${count}`), shops);
  const env = {
    SHOP_SYNC_CONFIG: configFile,
    SYNC_QUEUE_PREFIX: prefix,
    REDIS_URL: redisUrl,
    OPS_PORT: '0',
    WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
    SYNC_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
  };
  const names = shops.map((_, i) => `shop-${i + 1}`);
  const workers: ChildProcessByStdio<null, Readable, Readable>[] = [];
  try {
    for (let i = 0; i < count; i += 1) workers.push(await startWorker(env));
    const round: Round = { shops: names, items, sim, workers, env };
    const first = await syncAll('first syncs', round, baseline);
    const unchanged = await syncAll('unchanged resyncs', round, baseline);
    let loopMaxMs = 0;
    for (const worker of workers.splice(0)) loopMaxMs = Math.max(loopMaxMs, await stopWorker(worker));
    return { workers: count, inFlight, baseline, rounds: [first, unchanged], loopMaxMs };
  } finally {
    // Stopped first: a worker still running would write its keys again.
    await Promise.all(workers.map(ended));
    await removeKeys(redisUrl, prefix);
  }
}

/** Every key of the round (queues, schedules, tokens), gone from Redis. */
export async function removeKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = await connectRedis(redisUrl);
  try {
    await deleteKeysUnder(redis, prefix);
  } finally {
    await redis.quit();
  }
}

/**
 * `shops` shops of `items` items at 30 ms per request, synced through the Redis at `redisUrl` by each
 * number of worker processes in turn, each against a baseline client with as many requests in flight.
 */
export async function runFleet(
  shops: number,
  items: number,
  workerCounts: readonly number[],
  root: string,
  redisUrl: string,
): Promise<FleetResult> {
  const sim = await startSimulatorProcess([
    '--shops',
    String(shops),
    '--items',
    String(items),
    '--per-page-cap',
    '100',
    '--latency',
    String(LATENCY_MS),
  ]);
  try {
    const list = shopList(sim, shops, items);
    const runs: FleetWorkers[] = [];
    for (const count of workerCounts) runs.push(await withWorkers(sim, list, count, root, redisUrl));
    return { shops, itemsPerShop: items, latencyMs: LATENCY_MS, runs };
  } finally {
    await sim.close();
  }
}
