import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { type AppConfig, readSecret, requireConnection } from '../src/config/app-config.js';
import type { Logger } from '../src/log.js';
import { notificationOf } from '../src/notify/payload.js';
import { queueNotification } from './deliveries.js';
import { type OutcomeListener, Outcomes } from './job-events.js';
import { logErrors } from './log-errors.js';
import { type OpsSurface, opsSurface } from './ops/surface.js';
import { ShopQueues } from './queue.js';
import { startQueueWorkers } from './queue-workers.js';
import { connectRedis } from './redis.js';
import { applySchedules, keepSchedulesApplied } from './schedulers.js';
import { OrderlyShutdown } from './shutdown.js';
import { Slots } from './slots.js';
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
  /** The tick queue and every configured shop's sync queue. */
  readonly queues: ShopQueues;
  /** One BullMQ worker per configured shop's queue, then the tick worker. */
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
 * The worker process's engine: checks every configured shop, applies the schedules (and keeps them
 * applied), then processes each configured shop's sync queue and the shared tick queue until closed.
 * Fails with one sentence naming the setting when a shop cannot sync, or REDIS_URL when Redis does not
 * answer.
 */
export async function startWorker(
  config: AppConfig,
  log: Logger,
  options: StartWorkerOptions = {},
): Promise<WorkerHandle> {
  checkSettings(config);
  const ops = opsSurface(config, log);
  const queues = await openScheduledQueues(config, log);
  const { redis } = queues;
  const shutdown = new OrderlyShutdown(config.shutdownGraceSeconds, log);
  const outcomes = new Outcomes();
  const deps = syncDeps(config, log, queues, shutdown, ops, options);
  const workers = await startQueueWorkers({ config, queues, log, outcomes, notified: ops.notified }, deps);
  await ops.start({
    redis,
    queues: queues.all(),
    workers,
    onOutcome: (listener) => outcomes.listen(listener),
  });
  const stopHealing = keepSchedulesApplied(queues, config, log, options.scheduleRefreshMs);
  log.info(
    { shops: Object.keys(config.shops), concurrency: deps.slots.size, prefix: config.queuePrefix },
    'worker started',
  );
  const steps = {
    quiet: async () => {
      stopHealing();
      await ops.close();
    },
    workers,
    release: async () => {
      await queues.close();
      await redis.quit();
    },
  };
  return {
    redis,
    queues,
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

/**
 * Connects to Redis and applies the schedules; then opens every configured shop's queues, so that the
 * ops port shows them before their first job. Lets go of Redis when the schedules cannot be applied.
 */
async function openScheduledQueues(config: AppConfig, log: Logger): Promise<ShopQueues> {
  const redis = logErrors(await connectRedis(config.redisUrl), log, 'Redis connection');
  const queues = new ShopQueues(redis, config.queuePrefix, log);
  try {
    await applySchedules(queues, config, log);
  } catch (error) {
    await queues.close();
    redis.disconnect();
    throw error;
  }
  for (const shop of Object.values(config.shops)) {
    queues.of(shop.name);
    if (shop.notifyUrl !== undefined) queues.notifyOf(shop.name);
  }
  return queues;
}

/** What every sync of this worker shares: the slots, the stop signals, the ops port's events, notifications. */
function syncDeps(
  config: AppConfig,
  log: Logger,
  queues: ShopQueues,
  shutdown: OrderlyShutdown,
  ops: OpsSurface,
  options: StartWorkerOptions,
): SyncProcessorDeps {
  return {
    config,
    log,
    redis: queues.redis,
    slots: new Slots(config.workerConcurrency ?? defaultConcurrency(config)),
    stopping: shutdown.stopping,
    forced: shutdown.forced,
    extraDeps: (shop) => ({
      events: ops.events(shop),
      // The run's notification waits in Redis for the delivery workers: the sync's job does not wait for it.
      onRun:
        config.shops[shop]?.notifyUrl === undefined
          ? undefined
          : (ended) => queueNotification(queues, notificationOf(ended)),
      ...options.extraDeps?.(shop),
    }),
  };
}

function defaultConcurrency(config: AppConfig): number {
  return Math.min(Math.max(Object.keys(config.shops).length, 1), MAX_DEFAULT_CONCURRENCY);
}
