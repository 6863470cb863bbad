import { DelayedError, type Job, UnrecoverableError, WaitingError } from 'bullmq';
import type { Redis } from 'ioredis';
import { type AppConfig, requireConnection, type ShopConfig } from '../src/config/app-config.js';
import { InterruptedError, ShopSyncError, SyncBusyError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import {
  type HeldSummary,
  heldError,
  runSync,
  type SyncDeps,
  type SyncProgress,
  type SyncSummary,
} from '../src/sync/index.js';
import { ShopJobData, SYNC_JOB, type SyncJobProgress } from './queue.js';
import { RedisTokenStore } from './redis-token-store.js';

export interface SyncProcessorDeps {
  readonly config: AppConfig;
  readonly log: Logger;
  /** Where the shops' tokens are shared between worker processes and kept between jobs. */
  readonly redis: Redis;
  /** Aborted when the worker starts to stop: running syncs stop at their next safe point. */
  readonly stopping: AbortSignal;
  /** Aborted when the shutdown grace is over: whatever still runs is abandoned, its job back to waiting. */
  readonly forced: AbortSignal;
  /** More for `runSync` (the ops port's marketplace events). */
  readonly extraDeps?: (shop: string) => Partial<SyncDeps>;
}

/** Progress goes to Redis at most this often: not one write per page. */
export const PROGRESS_EVERY_MS = 1_000;
/** A job whose shop is busy waits this long (give or take a fifth) before it looks again. */
export const BUSY_WAIT_MS = 2_000;

type Processor = (job: Job<unknown, unknown>, token?: string, signal?: AbortSignal) => Promise<SyncSummary>;

/**
 * Runs the sync of the shop a job of the group's queue names: the same `runSync` as the CLI's `sync`.
 * A shop runs one sync at a time: a job whose shop is syncing (in this process, or elsewhere: its
 * store's lease is taken) goes back to wait a moment without spending an attempt. Domain errors become
 * BullMQ outcomes here, once: a sync stopped by the worker's shutdown goes back to waiting without
 * spending an attempt (it resumes from its checkpoint); a non-retryable error, a job that is not a valid
 * sync of a shop of this worker, or a bug fails the job for good with its reason; the rest is retried
 * with backoff (an unreachable API, a locked store).
 */
export function syncProcessor(deps: SyncProcessorDeps): Processor {
  const syncing = new Set<string>();
  return async (job, token, signal) => {
    const data = validSyncJob(job, deps.config);
    const { shop } = data;
    // runSync names the shop on each line it logs: the logger it is given must not name it again.
    const syncLog = deps.log.child({ job: job.id });
    const log = syncLog.child({ shop });
    if (syncing.has(shop)) return waitForShop(job, token, log, 'a sync of the shop runs in this worker');
    syncing.add(shop);
    try {
      const running = runJob(job as Job<ShopJobData>, data, deps, { log, syncLog }, signal);
      const summary = await untilForced(running, deps.forced);
      // Held: the job fails for good with the sentence; the next scheduled sync reads the listing again.
      if (summary.status === 'held') {
        await recordHeld(job, summary, log);
        throw heldError(summary);
      }
      return summary;
    } catch (error) {
      if (error instanceof SyncBusyError && !deps.stopping.aborted) {
        return await waitForShop(job, token, log, error.message);
      }
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
      syncing.delete(shop);
    }
  };
}

/** The job waits a moment, its attempt not spent, while another sync of its shop runs. */
async function waitForShop(job: Job, token: string | undefined, log: Logger, reason: string): Promise<never> {
  log.info({ reason }, 'shop busy; the job waits for its sync to end');
  await job.moveToDelayed(Date.now() + BUSY_WAIT_MS * (0.9 + Math.random() * 0.2), token);
  throw new DelayedError(reason);
}

function runJob(
  job: Job<ShopJobData>,
  { shop, acceptRemovals }: ShopJobData,
  deps: SyncProcessorDeps,
  { log, syncLog }: { log: Logger; syncLog: Logger },
  signal: AbortSignal | undefined,
): Promise<SyncSummary> {
  const { config, redis } = deps;
  const shopConfig = config.shops[shop] as ShopConfig;
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
    // A worker runs many syncs on one event loop: none of them waits there for another's fsyncs.
    fsyncsOffLoop: true,
    acceptRemovals,
    onProgress: throttledProgress(job, log),
    ...deps.extraDeps?.(shop),
  });
}

/** The job's data, or a permanent failure saying what is wrong with it. */
function validSyncJob(job: Job<unknown, unknown>, config: AppConfig): ShopJobData {
  if (job.name !== SYNC_JOB) {
    throw new UnrecoverableError(
      `Job "${job.name}" is not a sync: the sync queue runs only "${SYNC_JOB}" jobs.`,
    );
  }
  const parsed = ShopJobData.safeParse(job.data);
  if (!parsed.success) {
    throw new UnrecoverableError(`The sync job's data ${JSON.stringify(job.data)} does not name a shop.`);
  }
  if (!config.shops[parsed.data.shop]) {
    throw new UnrecoverableError(`Shop "${parsed.data.shop}" is not configured in this worker.`);
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

/**
 * The held run's summary as the job's last progress, before the job fails: `trigger --wait` prints it as
 * `sync` does. Redis failing here costs only that: the trigger then reports the job's sentence alone.
 */
async function recordHeld(job: Job, summary: HeldSummary, log: Logger): Promise<void> {
  const progress: SyncJobProgress = { held: summary };
  await job.updateProgress(progress).catch((error: unknown) => {
    log.warn({ err: error }, 'could not record the held run for the job');
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
