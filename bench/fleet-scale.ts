import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connectRedis } from '../jobs/redis.js';
import type { SyncSummary } from '../src/sync/index.js';
import type { BaselineWork } from './baseline-client.js';
import { BASELINE, CLI, measure, readProbe } from './child.js';
import {
  CLOCK_TICKS_PER_SECOND,
  cpuTicks,
  ended,
  LATENCY_MS,
  peakRssMiB,
  removeKeys,
  round2,
  shopList,
  startWorker,
  writeConfig,
} from './fleet-bench.js';
import { connectionsTo } from './redis-connections.js';
import { startSimulatorProcess } from './simulator-process.js';

/** Syncs the worker runs at once: small shops wait on the network, not on the CPU. */
const SCALE_CONCURRENCY = 32;
/** libuv's threads in the worker, as in the image (its default is 4). */
const THREADPOOL_SIZE = 16;
/** How long the worker is left idle before its resident memory is read. */
const IDLE_MS = 3_000;
const SAMPLE_MS = 200;

export interface ScaleResult {
  shops: number;
  itemsPerShop: number;
  latencyMs: number;
  concurrency: number;
  /** The worker's UV_THREADPOOL_SIZE. */
  threadpool: number;
  /** From spawning `shop-sync worker` until it logged `worker started`. */
  startupMs: number;
  /** The worker's own TCP connections to Redis (from /proc): after start-up, and the most during the round. */
  connections: { idle: number; peak: number };
  /** Every client of the Redis server (`CLIENT LIST`, the machine's other users included) before and after start-up. */
  clientList: { before: number; after: number };
  idleRssMiB: number;
  baseline: { wallMs: number; shopsPerSecond: number; cpuPerShopMs: number; peakRssMiB: number };
  /** One round of first syncs of every shop, `trigger --all --wait`. */
  first: {
    wallMs: number;
    shopsPerSecond: number;
    shopsPerSecondVsBaseline: number;
    cpuPerShopMs: number;
    cpuPerShopVsBaseline: number;
    peakRssMiB: number;
  };
  /** From SIGTERM until the worker exited, idle. */
  shutdownMs: number;
  loopMaxMs: number;
}

function rssMiB(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Math.round((Number(kib) / 1024) * 10) / 10;
}

async function clientCount(redisUrl: string): Promise<number> {
  const redis = await connectRedis(redisUrl);
  try {
    // Less the connection asking.
    return (
      String(await redis.client('LIST'))
        .trim()
        .split('\n').length - 1
    );
  } finally {
    await redis.quit();
  }
}

/**
 * `shops` shops of `items` items (default 1,000 x 20) at 30 ms per request, served by one worker process:
 * its start-up, its Redis connections, its idle memory, one round of first syncs against the baseline
 * client (with as many requests in flight as the worker runs syncs), and its shutdown.
 */
export async function runScale(
  shops: number,
  items: number,
  root: string,
  redisUrl: string,
): Promise<ScaleResult> {
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
  const prefix = `shop-sync-bench-${process.pid}-scale-${Date.now()}`;
  const port = Number(new URL(redisUrl).port || 6379);
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
  try {
    const list = shopList(sim, shops, items);
    const shopsFile = path.join(root, 'scale-shops.json');
    writeFileSync(shopsFile, JSON.stringify(list));
    const figures = await measure(BASELINE, ['--shops', shopsFile, '--in-flight', String(SCALE_CONCURRENCY)]);
    const work = JSON.parse(figures.stdout) as BaselineWork;
    const baseline = {
      wallMs: work.ms,
      shopsPerSecond: Math.round((shops * 1000) / work.ms),
      cpuPerShopMs: round2(work.cpuMs / shops),
      peakRssMiB: figures.peakRssMiB,
    };
    const configFile = path.join(root, 'scale.json');
    writeConfig(configFile, path.join(root, 'scale'), list);
    const env = {
      SHOP_SYNC_CONFIG: configFile,
      SYNC_QUEUE_PREFIX: prefix,
      REDIS_URL: redisUrl,
      OPS_PORT: '0',
      WORKER_CONCURRENCY: String(SCALE_CONCURRENCY),
      // As the image sets it for a worker of many small shops (docs/operations.md): the feeds' fsyncs.
      UV_THREADPOOL_SIZE: String(THREADPOOL_SIZE),
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    };
    const before = await clientCount(redisUrl);
    const starting = performance.now();
    worker = await startWorker(env);
    const startupMs = Math.round(performance.now() - starting);
    const pid = worker.pid as number;
    const idleConnections = connectionsTo(pid, port);
    const after = await clientCount(redisUrl);
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idleRssMiB = rssMiB(pid);

    let peakConnections = idleConnections;
    const sampler = setInterval(() => {
      peakConnections = Math.max(peakConnections, connectionsTo(pid, port));
    }, SAMPLE_MS);
    const ticksBefore = cpuTicks(pid);
    const trigger = await measure(CLI, ['trigger', '--all', '--wait', '--json'], { env }).finally(() =>
      clearInterval(sampler),
    );
    const cpuMs = ((cpuTicks(pid) - ticksBefore) * 1000) / CLOCK_TICKS_PER_SECOND;
    const summaries = trigger.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as SyncSummary);
    const complete = summaries.filter((summary) => summary.status === 'complete' && summary.items === items);
    if (complete.length !== shops)
      throw new Error(`only ${complete.length} of ${shops} shops synced completely`);
    const shopsPerSecond = Math.round((shops * 1000) / trigger.wallMs);
    const cpuPerShopMs = round2(cpuMs / shops);
    const peak = peakRssMiB(pid);

    const stopping = performance.now();
    await ended(worker);
    const shutdownMs = Math.round(performance.now() - stopping);
    const { loopMaxMs } = readProbe(pid);
    worker = undefined;
    return {
      shops,
      itemsPerShop: items,
      latencyMs: LATENCY_MS,
      concurrency: SCALE_CONCURRENCY,
      threadpool: THREADPOOL_SIZE,
      startupMs,
      connections: { idle: idleConnections, peak: peakConnections },
      clientList: { before, after },
      idleRssMiB,
      baseline,
      first: {
        wallMs: trigger.wallMs,
        shopsPerSecond,
        shopsPerSecondVsBaseline: round2(shopsPerSecond / baseline.shopsPerSecond),
        cpuPerShopMs,
        cpuPerShopVsBaseline: round2(cpuPerShopMs / baseline.cpuPerShopMs),
        peakRssMiB: peak,
      },
      shutdownMs,
      loopMaxMs,
    };
  } finally {
    if (worker) await ended(worker);
    await removeKeys(redisUrl, prefix);
    await sim.close();
  }
}
