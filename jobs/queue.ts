import { randomUUID } from 'node:crypto';
import { type Job, type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { SyncSummary } from '../src/sync.js';

/** The one queue every worker and `trigger` share; a key prefix keeps deployments (and tests) apart. */
export const QUEUE_NAME = 'shop-sync';
/** A sync of one shop: on demand (`trigger`) or enqueued by a scheduler tick. */
export const SYNC_JOB = 'sync';
/** What a shop's scheduler produces: it only enqueues a deduplicated sync (schedulers cannot deduplicate). */
export const SCHEDULED_JOB = 'scheduled-sync';

export interface ShopJobData {
  readonly shop: string;
}

export type SyncJob = Job<ShopJobData, SyncSummary>;

/**
 * Retries back off exponentially (30 s, 1 min, 2 min, ...) with jitter so that several shops failing
 * together do not retry in step; finished jobs are kept for inspection, but only so many.
 */
export const SYNC_JOB_OPTIONS: JobsOptions = {
  attempts: 6,
  backoff: { type: 'exponential', delay: 30_000, jitter: 0.25 },
  removeOnComplete: { age: 7 * 24 * 3600, count: 1000 },
  removeOnFail: { age: 30 * 24 * 3600, count: 1000 },
};

export function syncQueue(connection: Redis, prefix: string): Queue<ShopJobData, SyncSummary> {
  return new Queue<ShopJobData, SyncSummary>(QUEUE_NAME, { connection, prefix });
}

export interface Enqueued {
  readonly job: SyncJob;
  /** True when a sync of the shop was already waiting, delayed or running: `job` is that one. */
  readonly deduplicated: boolean;
}

/**
 * Queues a sync of `shop` unless one is already waiting or running: the deduplication id is the shop,
 * held by BullMQ until that job completes or finally fails. A deduplicated add returns the id of the
 * job already there instead of our fresh one, which is how we tell the two apart.
 */
export async function enqueueSync(queue: Queue<ShopJobData, SyncSummary>, shop: string): Promise<Enqueued> {
  const jobId = `${shop}-${randomUUID()}`;
  const added = await queue.add(
    SYNC_JOB,
    { shop },
    { ...SYNC_JOB_OPTIONS, jobId, deduplication: { id: shop } },
  );
  return { job: added, deduplicated: added.id !== jobId };
}
