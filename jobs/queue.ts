import { createHash, randomUUID } from 'node:crypto';
import { Job, type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { isShopName, SHOP_NAME_RULE } from '../src/config/app-config.js';
import type { Logger } from '../src/log.js';
import { type HeldSummary, heldError, type SyncProgress, type SyncSummary } from '../src/sync/index.js';
import { logErrors } from './log-errors.js';
import { QueueUnavailableError } from './queue-errors.js';
import { rememberingRepeatStrategy } from './repeat-strategy.js';

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
 * The shops a worker serves make its group: workers configured with the same shops share one sync queue
 * and one delivery queue, whatever the number of shops, and only they read them, so a job never reaches
 * a worker that does not know its shop (shards and rolling deploys share one Redis). The group's name
 * is derived from its shops rather than set, so two workers with different shops can never share one.
 */
export function groupOf(shops: readonly string[]): string {
  return createHash('sha256')
    .update([...shops].sort().join('\n'))
    .digest('hex')
    .slice(0, 12);
}

/** A group's sync queue. `@` is not allowed in a shop name: no shop's old queue can take this name. */
export function syncQueueName(group: string): string {
  return `sync@${group}`;
}

/** A group's notifications to deliver (see deliveries.ts). */
export function notifyQueueName(group: string): string {
  return `notify@${group}`;
}

/** The queue of one shop's syncs before workers were grouped: emptied by the workers that have its shop. */
export function legacySyncQueueName(shop: string): string {
  return `sync-${shop}`;
}

/** The queue of one shop's notifications before workers were grouped. */
export function legacyNotifyQueueName(shop: string): string {
  return `notify-${shop}`;
}

/** What a job carries, checked before any work: a job that is not this is failed for good. */
export const ShopJobData = z.strictObject({
  shop: z.string().refine(isShopName, SHOP_NAME_RULE),
  /** `trigger --accept-removals`: this sync completes whatever it removes. */
  acceptRemovals: z.literal(true).optional(),
});
export type ShopJobData = z.infer<typeof ShopJobData>;

/**
 * A sync job's progress: how far its run has got while it runs; once its run is held, that run's
 * summary. A held job fails for good with the sentence (not retried; `status` lists it with its reason),
 * and a failed job keeps no return value: its progress is where `trigger --wait` finds the counts.
 */
export type SyncJobProgress = SyncProgress | { readonly held: HeldSummary };

/**
 * The held run's summary of a job that failed because its run was held, else undefined. Its failure
 * reason must be that run's sentence: a job that held a run, stalled before it was failed and then
 * failed otherwise on its next attempt still has the held summary as its progress.
 */
export function heldSummaryOf(job: Pick<Job, 'progress' | 'failedReason'>): HeldSummary | undefined {
  const { progress } = job;
  if (typeof progress !== 'object' || progress === null || !('held' in progress)) return undefined;
  const held = (progress as { held: HeldSummary }).held;
  return held?.status === 'held' && heldError(held).message === job.failedReason ? held : undefined;
}

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
 * so that a Redis outage is logged as JSON lines instead of crashing or printing stacks. They share one
 * connection: only a BullMQ worker needs one of its own.
 */
export class ShopQueues {
  private readonly queues = new Map<string, Queue>();
  /** Shared by the queues: the schedulers' upserts ask it for each shop's next run. */
  private readonly repeatStrategy = rememberingRepeatStrategy();
  readonly ticks: Queue<ShopJobData, unknown>;

  /** `readOnly`: for a command that only reads (`status`), which must leave no key behind (a queue's `meta`). */
  constructor(
    readonly redis: Redis,
    readonly prefix: string,
    private readonly log: Logger,
    private readonly options: { readonly readOnly?: boolean } = {},
  ) {
    this.ticks = this.opened(TICK_QUEUE);
  }

  /** A group's sync queue. */
  syncOf(group: string): SyncQueue {
    return this.named(syncQueueName(group)) as SyncQueue;
  }

  /** A group's queue of notifications to deliver. */
  notifyOf(group: string): Queue {
    return this.named(notifyQueueName(group));
  }

  named(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = this.opened(name);
      this.queues.set(name, queue);
    }
    return queue;
  }

  private opened(name: string): Queue {
    const queue = new Queue(name, {
      connection: this.redis,
      prefix: this.prefix,
      skipMetasUpdate: this.options.readOnly === true,
      settings: { repeatStrategy: this.repeatStrategy },
    });
    return logErrors(queue, this.log, 'queue');
  }

  /** Every queue opened so far, the ticks' first. */
  all(): Queue[] {
    return [this.ticks as Queue, ...this.queues.values()];
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
  /** The job's id (a job moved from another queue keeps its own); a new one by default. */
  readonly jobId?: string;
}

/** The states of a sync that has not started (or went back to wait): a new request is that sync. */
const NOT_STARTED = new Set(['waiting', 'prioritized', 'delayed']);
/** Each round replaces a deduplication key left by a sync that has started meanwhile; two is the rule. */
const ENQUEUE_ROUNDS = 5;

/**
 * Queues a sync of `shop` that starts after this call: a sync of the shop that has not started yet
 * (waiting, or delayed in retry backoff, which `promote` makes run now) is that sync; a running one is
 * not, so a follow-up is queued behind it. The shop's deduplication key names its latest sync until
 * that sync finishes; when it names one that has started, the key is released (only if it still names
 * that sync, so two callers at once still queue one follow-up) and the sync queued again.
 */
export async function enqueueSync(
  queue: SyncQueue,
  shop: string,
  options: EnqueueOptions = {},
): Promise<Enqueued> {
  const jobId = options.jobId ?? `${shop}-${randomUUID()}`;
  const data: ShopJobData = options.acceptRemovals ? { shop, acceptRemovals: true } : { shop };
  for (let round = 0; round < ENQUEUE_ROUNDS; round += 1) {
    const added = await queue.add(SYNC_JOB, data, {
      ...SYNC_JOB_OPTIONS,
      jobId,
      deduplication: { id: shop },
    });
    if (added.id === jobId) return { job: added, deduplicated: false };
    const pending = await Job.fromId<ShopJobData, SyncSummary>(queue, String(added.id));
    const state = pending ? await pending.getState() : 'unknown';
    if (pending && NOT_STARTED.has(state)) {
      if (options.acceptRemovals) await pending.updateData({ ...pending.data, ...data });
      if (options.promote && state === 'delayed') await pending.promote();
      return { job: pending, deduplicated: true };
    }
    if (pending) await pending.removeDeduplicationKey();
  }
  throw new QueueUnavailableError(
    `Could not queue a sync of shop ${shop}: its syncs kept starting under ${ENQUEUE_ROUNDS} attempts to queue one.`,
  );
}
