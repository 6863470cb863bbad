import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { type AppConfig, readSecret, requireConnection } from '../src/config/app-config.js';
import type { Logger } from '../src/log.js';
import { notificationOf } from '../src/notify/payload.js';
import { SharedPools } from '../src/sync/index.js';
import { orphanAdopter } from './adopt-orphans.js';
import { queueNotification } from './deliveries.js';
import { registerGroup } from './groups.js';
import { type OutcomeListener, Outcomes } from './job-events.js';
import { logErrors } from './log-errors.js';
import { type OpsSurface, opsSurface } from './ops/surface.js';
import { groupOf, ShopQueues } from './queue.js';
import { startQueueWorkers } from './queue-workers.js';
import { connectRedis } from './redis.js';
import { applySchedules, keepTending, type OwnGroup } from './schedulers.js';
import { OrderlyShutdown } from './shutdown.js';
import type { SyncProcessorDeps } from './sync-processor.js';

/** Without WORKER_CONCURRENCY: one sync per shop at once, but no more than this many per process. */
const MAX_DEFAULT_CONCURRENCY = 4;

export interface StartWorkerOptions {
  /** How often the schedules are re-applied (tests make it short). */
  readonly scheduleRefreshMs?: number;
  /** More for each sync's `runSync` (the ops port passes its marketplace event counters). */
  readonly extraDeps?: SyncProcessorDeps['extraDeps'];
}

export interface WorkerHandle {
  readonly redis: Redis;
  /** The tick queue and the group's sync and delivery queues. */
  readonly queues: ShopQueues;
  /** The group of the configured shops, whose queues this worker reads. */
  readonly group: string;
  /** The group's sync worker, the tick worker, and the delivery worker if a shop has a notify URL. */
  readonly workers: readonly Worker[];
  /** Calls `listener` with each sync's outcome as it happens. */
  onOutcome(listener: OutcomeListener): void;
  /**
   * Stops taking jobs and stops running syncs at their next safe point; after the shutdown grace,
   * abandons what still runs (its job back to waiting, its run resumable). Then closes Redis.
   */
  close(): Promise<void>;
}

/**
 * The worker process's engine: checks every configured shop, registers the group of its shops, applies
 * the schedules and adopts orphaned jobs of its shops (and keeps doing so), then processes the group's
 * sync and delivery queues and the shared tick queue until closed. Fails with one sentence naming the
 * setting when a shop cannot sync, or REDIS_URL when Redis does not answer.
 */
export async function startWorker(
  config: AppConfig,
  log: Logger,
  options: StartWorkerOptions = {},
): Promise<WorkerHandle> {
  checkSettings(config);
  const ops = opsSurface(config, log);
  const shops = Object.keys(config.shops);
  const own: OwnGroup = { group: groupOf(shops), shops: new Set(shops) };
  const queues = await openQueues(config, log);
  const { redis } = queues;
  const adoptOrphans = orphanAdopter(queues, own, log);
  await untilReady(queues, async () => {
    await applySchedules(queues, config, log);
    await adoptOrphans();
  });
  const shutdown = new OrderlyShutdown(config.shutdownGraceSeconds, log);
  const outcomes = new Outcomes();
  const concurrency = config.workerConcurrency ?? defaultConcurrency(config);
  // Every sync of the process borrows its connections to the marketplace from these.
  const pools = new SharedPools(concurrency);
  const deps = syncDeps(config, log, queues, own.group, shutdown, ops, pools, options);
  const workers = await startQueueWorkers(
    { config, queues, group: own.group, concurrency, log, outcomes, notified: ops.notified },
    deps,
  );
  await ops.start({
    redis,
    queues: [queues.ticks as Queue, queues.syncOf(own.group), queues.notifyOf(own.group)],
    workers,
    onOutcome: (listener) => outcomes.listen(listener),
  });
  // Registered once its workers take jobs: `trigger` then finds the group served.
  const register = () => registerGroup(redis, config.queuePrefix, own.group, shops);
  await register();
  const tend = async () => {
    await register();
    await applySchedules(queues, config, log);
    await adoptOrphans();
  };
  const stopTending = keepTending(redis, tend, log, options.scheduleRefreshMs);
  log.info(
    { shops: shops.length, group: own.group, concurrency, prefix: config.queuePrefix },
    'worker started',
  );
  const steps = {
    quiet: async () => {
      stopTending();
      await ops.close();
    },
    workers,
    release: async () => {
      await pools.close();
      await queues.close();
      await redis.quit();
    },
  };
  return {
    redis,
    queues,
    group: own.group,
    workers,
    onOutcome: (listener) => outcomes.listen(listener),
    close: () => shutdown.close(steps),
  };
}

/** Every shop can sync, and the notification secret can be read: otherwise the worker does not start. */
function checkSettings(config: AppConfig): void {
  for (const shop of Object.values(config.shops)) requireConnection(shop);
  // Read once now so that a secret file that cannot be read stops the worker, naming it; read again at each delivery.
  if (config.notifySecret) readSecret(config.notifySecret);
}

/** Connects to Redis and opens the tick queue. */
async function openQueues(config: AppConfig, log: Logger): Promise<ShopQueues> {
  const redis = logErrors(await connectRedis(config.redisUrl), log, 'Redis connection');
  return new ShopQueues(redis, config.queuePrefix, log);
}

/** The schedules applied and orphans adopted before any job is taken; lets go of Redis when that fails. */
async function untilReady(queues: ShopQueues, prepare: () => Promise<void>): Promise<void> {
  try {
    await prepare();
  } catch (error) {
    await queues.close();
    queues.redis.disconnect();
    throw error;
  }
}

/** What every sync of this worker shares: the stop signals, the connections to the marketplace, the ops
 * port's events, notifications. */
function syncDeps(
  config: AppConfig,
  log: Logger,
  queues: ShopQueues,
  group: string,
  shutdown: OrderlyShutdown,
  ops: OpsSurface,
  pools: SharedPools,
  options: StartWorkerOptions,
): SyncProcessorDeps {
  return {
    config,
    log,
    redis: queues.redis,
    stopping: shutdown.stopping,
    forced: shutdown.forced,
    extraDeps: (shop) => ({
      events: ops.events(shop),
      pools,
      // The run's notification waits in Redis for the delivery workers: the sync's job does not wait for it.
      onRun:
        config.shops[shop]?.notifyUrl === undefined
          ? undefined
          : (ended) => queueNotification(queues, group, notificationOf(ended)),
      ...options.extraDeps?.(shop),
    }),
  };
}

function defaultConcurrency(config: AppConfig): number {
  return Math.min(Math.max(Object.keys(config.shops).length, 1), MAX_DEFAULT_CONCURRENCY);
}
