import type { Job } from 'bullmq';
import type { AppConfig } from '../../src/config/app-config.js';
import { DELIVER_JOB } from '../deliveries.js';
import { type GroupState, groupServing, readGroups } from '../groups.js';
import { type ShopJobData, type ShopQueues, SYNC_JOB, type SyncQueue } from '../queue.js';
import { schedulerId } from '../schedulers.js';
import { readLastCompleteRun } from './shop-runs.js';

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
  /** The cron pattern a worker applied (from Redis, not this process's settings); null: none has. */
  readonly schedule: string | null;
  /** When the applied schedule next queues a sync; null when none is applied. */
  readonly next_run: string | null;
  /** False until a worker has set the shop's schedule in Redis: then nothing runs it. */
  readonly scheduled: boolean;
  /** Whether a worker serving this shop is connected now: without one, nothing runs. */
  readonly worker_connected: boolean;
  /** The group of workers that takes the shop's jobs now (null: none is connected). */
  readonly group: string | null;
  readonly last_complete_run: { run: number; finished_at: string; items: number } | null;
}

export interface QueueStatus {
  readonly waiting: JobStatus[];
  readonly active: JobStatus[];
  readonly retrying: JobStatus[];
  readonly failed: JobStatus[];
  readonly failed_total: number;
  readonly shops: ShopStatus[];
  /** Workers connected that serve a configured shop (one per worker process). */
  readonly workers: number;
  readonly notifications: NotificationsStatus;
}

/** One notification not yet taken by its receiver, or given up. */
export interface DeliveryStatus {
  readonly shop: string;
  readonly delivery: string;
  readonly event: string;
  readonly added_at: string;
  readonly attempts: number;
  readonly reason: string | null;
  readonly next_attempt_after: string | null;
  readonly finished_at: string | null;
}

/** The worker's notifications (NOTIFY_URL) still to deliver, and those given up after 24 h. */
export interface NotificationsStatus {
  readonly waiting: DeliveryStatus[];
  readonly retrying: DeliveryStatus[];
  readonly failed: DeliveryStatus[];
}

/**
 * What `shop-sync status` shows: the configured shops' sync jobs by state across the queues of every
 * registered group (a delayed sync that already failed an attempt is retrying), per configured shop the
 * schedule a worker applied (the tick queue's schedulers in Redis, never this process's own settings),
 * its next run, the group that serves it, and its last complete run; and the notifications still to
 * deliver.
 */
export async function queueStatus(queues: ShopQueues, config: AppConfig): Promise<QueueStatus> {
  const shops = Object.values(config.shops);
  const configured = (job: Job) => config.shops[(job.data as { shop?: string }).shop ?? ''] !== undefined;
  const groups = (await readGroups(queues)).filter((group) =>
    shops.some((shop) => group.shops.has(shop.name)),
  );
  const [perGroup, schedulers, notifications] = await Promise.all([
    Promise.all(groups.map((group) => shopJobs(queues.syncOf(group.group), configured))),
    queues.ticks.getJobSchedulers(),
    notificationsStatus(queues, groups, configured),
  ]);
  const byScheduler = new Map(schedulers.map((s) => [s.id ?? s.key, s]));
  const all = (pick: (jobs: ShopJobs) => Job<ShopJobData>[]) =>
    perGroup
      .flatMap(pick)
      .sort((a, b) => b.timestamp - a.timestamp)
      .map(jobStatus);
  const failed = perGroup
    .flatMap((jobs) => jobs.failed)
    .sort((a, b) => (b.finishedOn ?? 0) - (a.finishedOn ?? 0))
    .slice(0, FAILED_SHOWN)
    .map(jobStatus);
  return {
    waiting: all((jobs) => jobs.waiting),
    active: all((jobs) => jobs.active),
    retrying: all((jobs) => jobs.delayed.filter((job) => job.attemptsMade > 0)),
    failed,
    failed_total: perGroup.reduce((total, jobs) => total + jobs.failedTotal, 0),
    workers: groups.reduce((total, group) => total + group.workers, 0),
    notifications,
    shops: shops.map((shop) => {
      const applied = byScheduler.get(schedulerId(shop.name));
      const run = readLastCompleteRun(config, shop.name);
      const group = groupServing(groups, shop.name) ?? null;
      return {
        shop: shop.name,
        schedule: applied?.pattern ?? null,
        next_run: applied?.next === undefined ? null : new Date(applied.next).toISOString(),
        scheduled: applied !== undefined,
        worker_connected: group !== null,
        group,
        last_complete_run: run
          ? { run: run.run, finished_at: run.finishedAt.toISOString(), items: run.items }
          : null,
      };
    }),
  };
}

async function notificationsStatus(
  queues: ShopQueues,
  groups: readonly GroupState[],
  configured: (job: Job) => boolean,
): Promise<NotificationsStatus> {
  const perShop = await Promise.all(
    groups.map(async ({ group }) => {
      const queue = queues.notifyOf(group);
      const [waiting, delayed, failed] = await Promise.all([
        queue.getJobs(['waiting', 'prioritized', 'active']),
        queue.getJobs(['delayed']),
        queue.getJobs(['failed'], 0, FAILED_SHOWN - 1),
      ]);
      return { waiting, delayed, failed };
    }),
  );
  const list = (pick: (jobs: (typeof perShop)[number]) => Job[]) =>
    perShop
      .flatMap(pick)
      .filter((job) => job.name === DELIVER_JOB && configured(job))
      .sort((a, b) => b.timestamp - a.timestamp)
      .map(deliveryStatus);
  return {
    waiting: list((jobs) => jobs.waiting),
    retrying: list((jobs) => jobs.delayed),
    failed: list((jobs) => jobs.failed).slice(0, FAILED_SHOWN),
  };
}

function deliveryStatus(job: Job): DeliveryStatus {
  const data = job.data as { shop?: string; delivery?: string; event?: string };
  const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : null);
  return {
    shop: data.shop ?? '',
    delivery: data.delivery ?? '',
    event: data.event ?? '',
    added_at: new Date(job.timestamp).toISOString(),
    attempts: job.attemptsMade,
    reason: job.failedReason || null,
    next_attempt_after:
      job.attemptsMade > 0 && job.delay > 0 ? iso((job.processedOn ?? 0) + job.delay) : null,
    finished_at: iso(job.finishedOn),
  };
}

/** A group's sync jobs of the configured shops by state. */
interface ShopJobs {
  readonly waiting: Job<ShopJobData>[];
  readonly active: Job<ShopJobData>[];
  readonly delayed: Job<ShopJobData>[];
  /** The group's latest failed jobs (enough for the newest FAILED_SHOWN of all groups). */
  readonly failed: Job<ShopJobData>[];
  readonly failedTotal: number;
}

async function shopJobs(queue: SyncQueue, configured: (job: Job) => boolean): Promise<ShopJobs> {
  const [waiting, active, delayed, failed, counts] = await Promise.all([
    queue.getJobs(['waiting', 'prioritized']),
    queue.getJobs(['active']),
    queue.getJobs(['delayed']),
    queue.getJobs(['failed'], 0, FAILED_SHOWN - 1),
    queue.getJobCounts('failed'),
  ]);
  const syncs = (jobs: Job<ShopJobData>[]) => jobs.filter((job) => job.name === SYNC_JOB && configured(job));
  return {
    waiting: syncs(waiting),
    active: syncs(active),
    delayed: syncs(delayed),
    failed: syncs(failed),
    failedTotal: counts.failed ?? 0,
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
