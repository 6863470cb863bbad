import { type Job, MetricsTime, UnrecoverableError, Worker, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { type AppConfig, readSecret, requireConnection } from '../src/config.js';
import type { Logger } from '../src/log.js';
import { notificationOf } from '../src/notify/payload.js';
import type { SyncSummary } from '../src/sync.js';
import { deliveryWorkers, queueNotification } from './deliveries.js';
import { errorCode, logErrors } from './log-errors.js';
import { opsSurface } from './ops/surface.js';
import { SCHEDULED_JOB, ShopJobData, ShopQueues, syncQueueName, TICK_QUEUE } from './queue.js';
import { connectRedis } from './redis.js';
import { applySchedules, scheduledSyncProcessor, type TickResult } from './schedulers.js';
import { Slots } from './slots.js';
import { type SyncProcessorDeps, syncProcessor } from './sync-processor.js';

/**
 * BullMQ renews a job's lock at half this period; a job whose worker was killed is found stalled once
 * its lock has run out, at the next stalled check (every STALLED_CHECK_MS): a killed sync is running
 * again within LOCK_DURATION_MS + STALLED_CHECK_MS = 45 s, and resumes from its checkpoint. The event
 * loop never blocks for anything near 15 s (staging and commit work in short slices), so a live job
 * does not lose its lock.
 */
export const LOCK_DURATION_MS = 30_000;
export const STALLED_CHECK_MS = 15_000;
/**
 * A job found stalled this many times fails instead of running again. Not 1 (BullMQ's default): a
 * worker killed by a node drain or an OOM kill of a neighbour should not cost the sync its run. Not
 * unbounded: a sync that kills its own worker every time (a shop too big for the container's memory)
 * must stop taking workers down, and its failure reason says it stalled.
 */
export const MAX_STALLED_COUNT = 3;
/** Without WORKER_CONCURRENCY: one sync per shop at once, but no more than this many per process. */
const MAX_DEFAULT_CONCURRENCY = 4;
/** Schedules are re-applied this often, so that schedules lost with Redis's data come back. */
export const SCHEDULE_REFRESH_MS = 60_000;

export interface StartWorkerOptions {
  /** How often the schedules are re-applied (tests make it short). */
  readonly scheduleRefreshMs?: number;
  /** More for each sync's `runSync` (the ops port passes its marketplace event counters). */
  readonly extraDeps?: SyncProcessorDeps['extraDeps'];
}

/** What became of a job, for whoever watches the worker (logs, the ops port's metrics). */
export interface JobOutcome {
  readonly shop: string;
  readonly job: string | undefined;
  readonly outcome: 'completed' | 'failed' | 'retrying';
  /** The sync's summary when it completed. */
  readonly summary?: SyncSummary;
  /** The failure's reason and its machine code (`CREDENTIALS_REJECTED`, `BUG` for an unexpected error). */
  readonly reason?: string;
  readonly code?: string;
}

export interface WorkerHandle {
  readonly redis: Redis;
  /** The tick queue and every configured shop's sync queue. */
  readonly queues: ShopQueues;
  /** One BullMQ worker per configured shop's queue, then the tick worker. */
  readonly workers: readonly Worker[];
  /** Calls `listener` with each sync's outcome as it happens. */
  onOutcome(listener: (outcome: JobOutcome) => void): void;
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
  for (const shop of Object.values(config.shops)) requireConnection(shop);
  // Read once now so that a secret file that cannot be read stops the worker, naming it; read again at each delivery.
  if (config.notifySecret) readSecret(config.notifySecret);
  const ops = opsSurface(config, log);
  const redis = logErrors(await connectRedis(config.redisUrl), log, 'Redis connection');
  const queues = new ShopQueues(redis, config.queuePrefix, log);
  try {
    await applySchedules(queues, config, log);
  } catch (error) {
    await queues.close();
    redis.disconnect();
    throw error;
  }
  const stopping = new AbortController();
  const forced = new AbortController();
  const listeners: Array<(outcome: JobOutcome) => void> = [];
  const emit = (outcome: JobOutcome) => {
    for (const listener of listeners) listener(outcome);
  };
  const deps: SyncProcessorDeps = {
    config,
    log,
    redis,
    slots: new Slots(config.workerConcurrency ?? defaultConcurrency(config)),
    stopping: stopping.signal,
    forced: forced.signal,
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
  const settings: WorkerOptions = {
    connection: redis,
    prefix: config.queuePrefix,
    concurrency: 1,
    lockDuration: LOCK_DURATION_MS,
    stalledInterval: STALLED_CHECK_MS,
    maxStalledCount: MAX_STALLED_COUNT,
    // BullMQ counts completed and failed jobs only when asked to; /metrics exports the counts.
    metrics: { maxDataPoints: MetricsTime.ONE_WEEK },
  };
  const workers: Worker[] = Object.keys(config.shops).map((shop) => {
    const worker = new Worker(syncQueueName(shop), syncProcessor(shop, deps), settings);
    logJobEvents(worker, shop, log, emit);
    return worker;
  });
  workers.push(tickWorker(queues, settings, log));
  workers.push(...deliveryWorkers(config, settings, log, ops.notified));
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  for (const shop of Object.values(config.shops)) {
    queues.of(shop.name);
    if (shop.notifyUrl !== undefined) queues.notifyOf(shop.name);
  }
  await ops.start({
    redis,
    queues: queues.all(),
    workers,
    onOutcome: (listener) => listeners.push(listener),
  });
  const stopHealing = healSchedules(redis, queues, config, log, options.scheduleRefreshMs);
  log.info(
    { shops: Object.keys(config.shops), concurrency: deps.slots.size, prefix: config.queuePrefix },
    'worker started',
  );

  let closing: Promise<void> | undefined;
  const shutdown = async () => {
    const graceMs = config.shutdownGraceSeconds * 1000;
    log.info(
      { grace_seconds: config.shutdownGraceSeconds },
      'worker stopping: no new jobs; running syncs stop',
    );
    stopHealing();
    stopping.abort();
    await ops.close();
    const grace = setTimeout(() => {
      log.warn('shutdown grace over: stopping what still runs; its jobs go back to waiting');
      forced.abort();
    }, graceMs);
    await Promise.all(workers.map((worker) => worker.close()));
    clearTimeout(grace);
    await queues.close();
    await redis.quit();
    log.info('worker stopped');
  };
  return {
    redis,
    queues,
    workers,
    onOutcome: (listener) => {
      listeners.push(listener);
    },
    close: () => {
      closing ??= shutdown();
      return closing;
    },
  };
}

function tickWorker(queues: ShopQueues, settings: WorkerOptions, log: Logger): Worker {
  const tick = scheduledSyncProcessor(queues);
  const worker = new Worker<unknown, TickResult>(
    TICK_QUEUE,
    (job) => {
      const data = ShopJobData.safeParse(job.data);
      if (job.name !== SCHEDULED_JOB || !data.success) {
        throw new UnrecoverableError(
          `Job "${job.name}" with data ${JSON.stringify(job.data)} is not a scheduler tick of a shop.`,
        );
      }
      return tick(job as Job<ShopJobData>);
    },
    settings,
  );
  worker.on('failed', (job, error) =>
    log.error({ job: job?.id, reason: error.message }, 'scheduler tick failed'),
  );
  logErrors(worker, log, 'worker');
  return worker as Worker;
}

/** Re-applies the schedules whenever Redis comes back and every `everyMs`; returns how to stop that. */
function healSchedules(
  redis: Redis,
  queues: ShopQueues,
  config: AppConfig,
  log: Logger,
  everyMs = SCHEDULE_REFRESH_MS,
) {
  let applying = false;
  const apply = (why: string) => {
    if (applying) return;
    applying = true;
    applySchedules(queues, config, log)
      .then(() => log.debug({ why }, 'schedules applied'))
      .catch((error: unknown) =>
        log.warn(
          { code: errorCode(error), reason: (error as Error).message },
          'could not apply the schedules',
        ),
      )
      .finally(() => {
        applying = false;
      });
  };
  const onReady = () => apply('Redis reconnected');
  redis.on('ready', onReady);
  const timer = setInterval(() => apply('periodic'), everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    redis.off('ready', onReady);
  };
}

function defaultConcurrency(config: AppConfig): number {
  return Math.min(Math.max(Object.keys(config.shops).length, 1), MAX_DEFAULT_CONCURRENCY);
}

function logJobEvents(worker: Worker, shop: string, log: Logger, emit: (outcome: JobOutcome) => void): void {
  const fields = (job: Job) => ({ job: job.id, name: job.name, shop });
  worker.on('active', (job) => log.info({ ...fields(job), attempt: job.attemptsMade + 1 }, 'job started'));
  worker.on('completed', (job, summary: SyncSummary) => {
    log.info(fields(job), 'job completed');
    emit({ shop, job: job.id, outcome: 'completed', summary });
  });
  worker.on('failed', (job, error) => {
    if (!job) return log.error({ shop, reason: error.message }, 'job failed');
    const retries = !(error instanceof UnrecoverableError) && job.attemptsMade < (job.opts.attempts ?? 1);
    const code = errorCode(error);
    log.error(
      { ...fields(job), attempts: job.attemptsMade, retries, code, reason: error.message },
      'job failed',
    );
    emit({ shop, job: job.id, outcome: retries ? 'retrying' : 'failed', code, reason: error.message });
  });
  worker.on('stalled', (job) =>
    log.warn({ job, shop }, 'job stalled: its worker stopped renewing its lock; it runs again'),
  );
  logErrors(worker, log, 'worker');
}
