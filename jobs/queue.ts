import { randomUUID } from 'node:crypto';
import { type Job, type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { isShopName, SHOP_NAME_RULE } from '../src/config/app-config.js';
import type { Logger } from '../src/log.js';
import type { SyncSummary } from '../src/sync/index.js';
import { logErrors } from './log-errors.js';

/**
 * The shared queue of scheduler ticks. Any worker may take a tick: it only queues a sync in the shop's
 * own queue, so ticks and syncs keep separate histories too.
 */
export const TICK_QUEUE = 'shop-sync';
/** A sync of one shop: on demand (`trigger`) or queued by a scheduler tick. */
export const SYNC_JOB = 'sync';
/** What a shop's scheduler produces: it only queues a deduplicated sync (schedulers cannot deduplicate). */
export const SCHEDULED_JOB = 'scheduled-sync';

/**
 * Each shop has a sync queue of its own, read only by workers that have the shop configured: a job
 * never reaches a worker that does not know its shop (shards and rolling deploys share one Redis), and
 * one worker per queue with concurrency 1 runs one sync of a shop at a time.
 */
export function syncQueueName(shop: string): string {
  return `sync-${shop}`;
}

/** A shop's notifications to deliver: a queue of its own, read only by workers that know the shop. */
export function notifyQueueName(shop: string): string {
  return `notify-${shop}`;
}

/** What a job carries, checked before any work: a job that is not this is failed for good. */
export const ShopJobData = z.strictObject({
  shop: z.string().refine(isShopName, SHOP_NAME_RULE),
  /** `trigger --accept-removals`: this sync completes whatever it removes. */
  acceptRemovals: z.literal(true).optional(),
});
export type ShopJobData = z.infer<typeof ShopJobData>;

export type SyncJob = Job<ShopJobData, SyncSummary>;
export type SyncQueue = Queue<ShopJobData, SyncSummary>;

const KEEP_COMPLETED_SECONDS = 7 * 24 * 3600;
const KEEP_FAILED_SECONDS = 30 * 24 * 3600;

/**
 * Retries back off exponentially (30 s, 1 min, 2 min, ...) with jitter so that several shops failing
 * together do not retry in step; finished jobs are kept for inspection, but only so many.
 */
export const SYNC_JOB_OPTIONS: JobsOptions = {
  attempts: 6,
  backoff: { type: 'exponential', delay: 30_000, jitter: 0.25 },
  removeOnComplete: { age: KEEP_COMPLETED_SECONDS, count: 1000 },
  removeOnFail: { age: KEEP_FAILED_SECONDS, count: 1000 },
};

/** A tick's outcome is in the sync it queued: completed ticks go at once, failed ones age out. */
export const TICK_JOB_OPTIONS: JobsOptions = {
  removeOnComplete: true,
  removeOnFail: { age: KEEP_FAILED_SECONDS },
};

/**
 * The queues one process uses, opened on first use and closed together. Each has an `error` listener,
 * so that a Redis outage is logged as JSON lines instead of crashing or printing stacks.
 */
export class ShopQueues {
  private readonly queues = new Map<string, SyncQueue>();
  private readonly notifyQueues = new Map<string, Queue>();
  readonly ticks: Queue<ShopJobData, unknown>;

  constructor(
    readonly redis: Redis,
    readonly prefix: string,
    private readonly log: Logger,
  ) {
    this.ticks = logErrors(new Queue(TICK_QUEUE, { connection: redis, prefix }), log, 'queue');
  }

  of(shop: string): SyncQueue {
    let queue = this.queues.get(shop);
    if (!queue) {
      queue = logErrors(
        new Queue<ShopJobData, SyncSummary>(syncQueueName(shop), {
          connection: this.redis,
          prefix: this.prefix,
        }),
        this.log,
        'queue',
      );
      this.queues.set(shop, queue);
    }
    return queue;
  }

  /** A shop's queue of notifications to deliver (see deliveries.ts). */
  notifyOf(shop: string): Queue {
    let queue = this.notifyQueues.get(shop);
    if (!queue) {
      queue = logErrors(
        new Queue(notifyQueueName(shop), { connection: this.redis, prefix: this.prefix }),
        this.log,
        'queue',
      );
      this.notifyQueues.set(shop, queue);
    }
    return queue;
  }

  /** Every queue opened so far (the ticks' first, then the syncs', then the notifications'). */
  all(): Queue[] {
    return [this.ticks as Queue, ...(this.queues.values() as Iterable<Queue>), ...this.notifyQueues.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((queue) => queue.close()));
  }
}

export interface Enqueued {
  readonly job: SyncJob;
  /** True when a sync of the shop that had not started yet was there already: `job` is that one. */
  readonly deduplicated: boolean;
}

export interface EnqueueOptions {
  /** A sync waiting in retry backoff runs now (a trigger) instead of at its time (a scheduler tick). */
  readonly promote?: boolean;
  /** The sync completes whatever it removes (`trigger --accept-removals`), also one already waiting. */
  readonly acceptRemovals?: boolean;
}

/**
 * Queues a sync of `shop` that starts after this call: a sync that has not started yet (waiting, or
 * delayed in retry backoff, which `promote` makes run now) is that sync; a running one is not, so a
 * follow-up is queued behind it. The deduplication id is released by the processor as the job starts,
 * so it only guards against two callers queuing at the same moment.
 */
export async function enqueueSync(
  queue: SyncQueue,
  shop: string,
  options: EnqueueOptions = {},
): Promise<Enqueued> {
  const [pending] = await queue.getJobs(['waiting', 'prioritized', 'delayed'], 0, 0, true);
  const data: ShopJobData = options.acceptRemovals ? { shop, acceptRemovals: true } : { shop };
  if (pending) {
    if (options.acceptRemovals) await pending.updateData({ ...pending.data, ...data });
    if (options.promote && (await pending.isDelayed())) await pending.promote();
    return { job: pending, deduplicated: true };
  }
  const jobId = `${shop}-${randomUUID()}`;
  const added = await queue.add(SYNC_JOB, data, { ...SYNC_JOB_OPTIONS, jobId, deduplication: { id: shop } });
  return { job: added, deduplicated: added.id !== jobId };
}
