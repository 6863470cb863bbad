import type { Job, Queue } from 'bullmq';
import type { AppConfig } from '../../src/config.js';
import type { SyncSummary } from '../../src/sync.js';
import { type ShopJobData, SYNC_JOB } from '../queue.js';
import { schedulerId } from '../schedulers.js';
import { nextScheduledRun, readLastCompleteRun } from './shop-runs.js';

/** Failed jobs listed, newest first; the count covers them all. */
const FAILED_SHOWN = 20;

export interface JobStatus {
  readonly id: string;
  readonly shop: string;
  readonly added_at: string;
  /** Attempts that ended in failure so far. */
  readonly attempts: number;
  readonly max_attempts: number;
  /** Why the latest attempt failed (null if none did). */
  readonly reason: string | null;
  /** Retrying jobs: the next attempt starts no earlier than this. */
  readonly next_attempt_after: string | null;
  readonly finished_at: string | null;
}

export interface ShopStatus {
  readonly shop: string;
  readonly schedule: string;
  readonly next_run: string;
  /** False until a worker has set the shop's schedule in Redis: then nothing runs it. */
  readonly scheduled: boolean;
  readonly last_complete_run: { run: number; finished_at: string; items: number } | null;
}

export interface QueueStatus {
  readonly waiting: JobStatus[];
  readonly active: JobStatus[];
  readonly retrying: JobStatus[];
  readonly failed: JobStatus[];
  readonly failed_total: number;
  readonly shops: ShopStatus[];
}

/**
 * What `shop-sync status` shows: the sync jobs by state (a delayed sync that already failed an
 * attempt is retrying), and per configured shop its schedule, next run and last complete run.
 */
export async function queueStatus(
  queue: Queue<ShopJobData, SyncSummary>,
  config: AppConfig,
  now = new Date(),
): Promise<QueueStatus> {
  const [waiting, active, delayed, failed, counts, schedulers] = await Promise.all([
    queue.getJobs(['waiting', 'prioritized']),
    queue.getJobs(['active']),
    queue.getJobs(['delayed']),
    queue.getJobs(['failed'], 0, FAILED_SHOWN - 1),
    queue.getJobCounts('failed'),
    queue.getJobSchedulers(),
  ]);
  const nextByScheduler = new Map(schedulers.map((s) => [s.id ?? s.key, s.next]));
  const syncs = (jobs: Job<ShopJobData>[]) => jobs.filter((job) => job.name === SYNC_JOB).map(jobStatus);
  return {
    waiting: syncs(waiting),
    active: syncs(active),
    retrying: syncs(delayed.filter((job) => job.attemptsMade > 0)),
    failed: syncs(failed),
    failed_total: counts.failed ?? 0,
    shops: Object.values(config.shops).map((shop) => {
      const next = nextByScheduler.get(schedulerId(shop.name));
      const run = readLastCompleteRun(config, shop.name);
      return {
        shop: shop.name,
        schedule: shop.schedule,
        next_run: new Date(next ?? nextScheduledRun(shop, now)).toISOString(),
        scheduled: next !== undefined,
        last_complete_run: run
          ? { run: run.run, finished_at: run.finishedAt.toISOString(), items: run.items }
          : null,
      };
    }),
  };
}

function jobStatus(job: Job<ShopJobData>): JobStatus {
  const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : null);
  return {
    id: job.id ?? '',
    shop: job.data.shop,
    added_at: new Date(job.timestamp).toISOString(),
    attempts: job.attemptsMade,
    max_attempts: job.opts.attempts ?? 1,
    reason: job.failedReason || null,
    next_attempt_after:
      job.attemptsMade > 0 && job.delay > 0 ? iso((job.processedOn ?? 0) + job.delay) : null,
    finished_at: iso(job.finishedOn),
  };
}
