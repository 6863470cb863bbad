import { type Job, MetricsTime, UnrecoverableError, Worker } from 'bullmq';
import type { AppConfig } from '../src/config.js';
import type { Logger } from '../src/log.js';
import type { SyncSummary } from '../src/sync.js';
import { opsSurface } from './ops/surface.js';
import { QUEUE_NAME, SCHEDULED_JOB, type ShopJobData, syncQueue } from './queue.js';
import { connectRedis } from './redis.js';
import { scheduledSyncProcessor, syncSchedulers, type TickResult } from './schedulers.js';
import { syncProcessor } from './sync-processor.js';

/**
 * Long enough that a big commit (synchronous SQLite work) never outlasts it: BullMQ renews the lock at
 * half this period, and a lost lock makes the job stalled and run twice. The price is that a job of a
 * killed worker waits up to this long before another worker picks it up (and resumes it).
 */
const LOCK_DURATION_MS = 120_000;
/** Without WORKER_CONCURRENCY: one sync per shop at once, but no more than this many per process. */
const MAX_DEFAULT_CONCURRENCY = 4;

export interface WorkerHandle {
  /** Stops taking jobs, interrupts running syncs after their current page, waits for them, closes Redis. */
  close(): Promise<void>;
}

type ShopJob = Job<ShopJobData, SyncSummary | TickResult>;

/**
 * The worker process's engine: upserts the shops' schedulers, then processes sync jobs (several shops
 * in parallel, one sync per shop) until closed. Fails with one sentence naming REDIS_URL when Redis
 * does not answer.
 */
export async function startWorker(config: AppConfig, log: Logger): Promise<WorkerHandle> {
  const redis = await connectRedis(config.redisUrl);
  redis.on('error', (error) => log.warn({ err: error }, 'Redis connection error; reconnecting'));
  const queue = syncQueue(redis, config.queuePrefix);
  try {
    await syncSchedulers(queue, config, log);
  } catch (error) {
    await queue.close();
    redis.disconnect();
    throw error;
  }
  const stopping = new AbortController();
  const ops = opsSurface(config, log);
  const sync = syncProcessor({ config, log, redis, stopping: stopping.signal, events: ops.events });
  const tick = scheduledSyncProcessor(queue);
  const concurrency = config.workerConcurrency ?? defaultConcurrency(config);
  const worker = new Worker<ShopJobData, SyncSummary | TickResult>(
    QUEUE_NAME,
    (job, token, signal) => (job.name === SCHEDULED_JOB ? tick(job) : sync(job, token, signal)),
    {
      connection: redis,
      prefix: config.queuePrefix,
      concurrency,
      lockDuration: LOCK_DURATION_MS,
      metrics: { maxDataPoints: MetricsTime.ONE_WEEK },
    },
  );
  logJobEvents(worker, log);
  await worker.waitUntilReady();
  await ops.start({ redis, queue, worker });
  log.info({ shops: Object.keys(config.shops), concurrency, prefix: config.queuePrefix }, 'worker started');

  let closing: Promise<void> | undefined;
  const shutdown = async () => {
    log.info('worker stopping: no new jobs; running syncs stop after their current page');
    stopping.abort();
    await ops.close();
    await worker.close();
    await queue.close();
    await redis.quit();
    log.info('worker stopped');
  };
  return {
    close: () => {
      closing ??= shutdown();
      return closing;
    },
  };
}

function defaultConcurrency(config: AppConfig): number {
  return Math.min(Math.max(Object.keys(config.shops).length, 1), MAX_DEFAULT_CONCURRENCY);
}

function logJobEvents(worker: Worker<ShopJobData, SyncSummary | TickResult>, log: Logger): void {
  const fields = (job: ShopJob) => ({ job: job.id, name: job.name, shop: job.data.shop });
  worker.on('active', (job) => log.info({ ...fields(job), attempt: job.attemptsMade + 1 }, 'job started'));
  worker.on('completed', (job) => log.info(fields(job), 'job completed'));
  worker.on('failed', (job, error) => {
    if (!job) return log.error({ reason: error.message }, 'job failed');
    const retries = !(error instanceof UnrecoverableError) && job.attemptsMade < (job.opts.attempts ?? 1);
    log.error({ ...fields(job), attempts: job.attemptsMade, retries, reason: error.message }, 'job failed');
  });
  worker.on('error', (error) => log.error({ err: error }, 'worker error'));
}
