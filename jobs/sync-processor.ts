import { type Job, UnrecoverableError, WaitingError } from 'bullmq';
import type { Redis } from 'ioredis';
import { type AppConfig, requireConnection } from '../src/config/app-config.js';
import { InterruptedError, RemovalsHeldError, ShopSyncError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import { runSync, type SyncDeps, type SyncProgress, type SyncSummary } from '../src/sync/index.js';
import { ShopJobData, SYNC_JOB } from './queue.js';
import { RedisTokenStore } from './redis-token-store.js';
import type { Slots } from './slots.js';

export interface SyncProcessorDeps {
  readonly config: AppConfig;
  readonly log: Logger;
  /** Where the shops' tokens are shared between worker processes and kept between jobs. */
  readonly redis: Redis;
  readonly slots: Slots;
  /** Aborted when the worker starts to stop: running syncs stop at their next safe point. */
  readonly stopping: AbortSignal;
  /** Aborted when the shutdown grace is over: whatever still runs is abandoned, its job back to waiting. */
  readonly forced: AbortSignal;
  /** More for `runSync` (the ops port's marketplace events). */
  readonly extraDeps?: (shop: string) => Partial<SyncDeps>;
}

/** Progress goes to Redis at most this often: not one write per page. */
export const PROGRESS_EVERY_MS = 1_000;

type Processor = (job: Job<unknown, unknown>, token?: string, signal?: AbortSignal) => Promise<SyncSummary>;

/**
 * Runs one shop's sync for a job of that shop's queue: the same `runSync` as the CLI's `sync`. Domain
 * errors become BullMQ outcomes here, once: a sync stopped by the worker's shutdown goes back to
 * waiting without spending an attempt (it resumes from its checkpoint); a non-retryable error, a job
 * that is not a valid sync of this shop, or a bug fails the job for good with its reason; the rest is
 * retried with backoff (a busy shop, an unreachable API, a locked store).
 */
export function syncProcessor(shop: string, deps: SyncProcessorDeps): Processor {
  return async (job, token, signal) => {
    const data = validSyncJob(job, shop);
    await job.removeDeduplicationKey();
    // runSync names the shop on each line it logs: the logger it is given must not name it again.
    const syncLog = deps.log.child({ job: job.id });
    const log = syncLog.child({ shop });
    let release: (() => void) | undefined;
    try {
      release = await deps.slots.take(deps.stopping);
      const running = runJob(job as Job<ShopJobData>, data, deps, { log, syncLog }, signal);
      const summary = await untilForced(running, deps.forced);
      // Held: the job fails for good with the sentence; the next scheduled sync reads the listing again.
      if (summary.status === 'held') throw new RemovalsHeldError(`Shop ${shop}: ${summary.held}.`);
      return summary;
    } catch (error) {
      if (error instanceof InterruptedError || (deps.stopping.aborted && isRetryable(error))) {
        log.info({ reason: (error as Error).message }, 'sync interrupted; the job goes back to waiting');
        await job.moveToWait(token);
        throw new WaitingError((error as Error).message);
      }
      if (error instanceof UnrecoverableError) throw error;
      if (error instanceof ShopSyncError) {
        if (!error.retryable) throw withCode(new UnrecoverableError(error.message), error.code);
        throw error;
      }
      log.error({ err: error }, 'unexpected error in a sync');
      throw withCode(
        new UnrecoverableError(`unexpected error: ${(error as Error)?.message ?? String(error)}`),
        'BUG',
      );
    } finally {
      release?.();
    }
  };
}

function runJob(
  job: Job<ShopJobData>,
  { shop, acceptRemovals }: ShopJobData,
  deps: SyncProcessorDeps,
  { log, syncLog }: { log: Logger; syncLog: Logger },
  signal: AbortSignal | undefined,
): Promise<SyncSummary> {
  const { config, redis } = deps;
  const shopConfig = config.shops[shop];
  if (!shopConfig) throw new UnrecoverableError(`Shop "${shop}" is not configured in this worker.`);
  return runSync(shopConfig, {
    config,
    log: syncLog,
    signal: signal ? AbortSignal.any([signal, deps.stopping]) : deps.stopping,
    tokenStore: new RedisTokenStore(redis, {
      prefix: config.queuePrefix,
      shop,
      clientSecret: requireConnection(shopConfig).clientSecret,
      logger: log,
    }),
    leaseOwner: String(job.id),
    acceptRemovals,
    onProgress: throttledProgress(job, log),
    ...deps.extraDeps?.(shop),
  });
}

/** The job's data, or a permanent failure saying what is wrong with it. */
function validSyncJob(job: Job<unknown, unknown>, shop: string): ShopJobData {
  if (job.name !== SYNC_JOB) {
    throw new UnrecoverableError(
      `Job "${job.name}" is not a sync: the queue of shop ${shop} runs only "${SYNC_JOB}" jobs.`,
    );
  }
  const parsed = ShopJobData.safeParse(job.data);
  if (!parsed.success || parsed.data.shop !== shop) {
    throw new UnrecoverableError(
      `The sync job's data ${JSON.stringify(job.data)} does not name shop ${shop}, whose queue it is in.`,
    );
  }
  return parsed.data;
}

/** Resolves like `work`, unless `forced` fires first: then it rejects with InterruptedError at once. */
function untilForced<T>(work: Promise<T>, forced: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abandon = () =>
      reject(
        new InterruptedError(
          'The shutdown grace ran out; the sync was stopped and resumes from its checkpoint.',
        ),
      );
    if (forced.aborted) return abandon();
    forced.addEventListener('abort', abandon, { once: true });
    work.then(resolve, reject).finally(() => forced.removeEventListener('abort', abandon));
  });
}

function throttledProgress(job: Job, log: Logger): (progress: SyncProgress) => void {
  let last = 0;
  return (progress) => {
    const now = Date.now();
    if (now - last < PROGRESS_EVERY_MS) return;
    last = now;
    job.updateProgress({ ...progress }).catch((error: unknown) => {
      log.warn({ err: error }, 'could not record job progress');
    });
  };
}

function isRetryable(error: unknown): boolean {
  return error instanceof ShopSyncError && error.retryable;
}

/** The failure keeps its machine code through BullMQ's own error class, for the job's log line. */
function withCode(error: UnrecoverableError, code: string): UnrecoverableError {
  return Object.assign(error, { code });
}
