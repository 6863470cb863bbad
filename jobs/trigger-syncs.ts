import { setTimeout as sleep } from 'node:timers/promises';
import { Job } from 'bullmq';
import { InterruptedError, ShopSyncError } from '../src/errors.js';
import type { SyncSummary } from '../src/sync/index.js';
import { groupServing, readGroups } from './groups.js';
import { enqueueSync, heldSummaryOf, type ShopQueues } from './queue.js';
import {
  NoWorkerError,
  QueueUnavailableError,
  SyncJobFailedError,
  WaitTimeoutError,
} from './queue-errors.js';

export interface Triggered {
  readonly shop: string;
  readonly job: string;
  /** A sync of the shop that had not started yet was there already (and now runs at once if it was retrying). */
  readonly deduplicated: boolean;
  /** The group of workers whose queue holds the job. */
  readonly group: string;
}

/**
 * Queues a sync of each shop that starts after this call (see `enqueueSync`), a sync in retry backoff
 * promoted to run now, in the queue of the group that serves the shop (the newest group with a worker
 * connected that registered it). Fails at once, queuing nothing, when no worker serves a shop.
 */
export async function triggerSyncs(
  queues: ShopQueues,
  shops: readonly string[],
  options: { readonly acceptRemovals?: boolean } = {},
): Promise<Triggered[]> {
  const groups = await readGroups(queues);
  const routes = shops.map((shop) => ({ shop, group: groupServing(groups, shop) }));
  const unserved = routes.filter((route) => route.group === undefined).map((route) => route.shop);
  if (unserved.length > 0) {
    throw new NoWorkerError(
      `No worker is connected for shop ${unserved.join(', ')} (under prefix ${queues.prefix}): start \`shop-sync worker\` with the shop configured.`,
    );
  }
  return Promise.all(
    routes.map(async ({ shop, group }) => {
      const queue = queues.syncOf(group as string);
      const { job, deduplicated } = await enqueueSync(queue, shop, {
        promote: true,
        acceptRemovals: options.acceptRemovals,
      });
      return { shop, job: String(job.id), deduplicated, group: group as string };
    }),
  );
}

/** A sync that ran to its end (its summary, complete or held, as `sync` has it), or failed otherwise. */
export type SyncResult =
  | { readonly shop: string; readonly job: string; readonly summary: SyncSummary }
  | { readonly shop: string; readonly job: string; readonly error: ShopSyncError };

export interface WaitOptions {
  /** Give up after this long (the syncs go on in the worker). */
  readonly timeoutMs?: number;
  /** The user stopping the wait. */
  readonly signal: AbortSignal;
  /** Called as each sync finishes, in the order they finish. */
  readonly onResult?: (result: SyncResult) => void;
}

const POLL_MS = 200;

/**
 * Waits until a worker has finished each triggered sync: completed (its summary), held (the held run's
 * summary its failed job keeps) or failed for good (its reason). A sync interrupted by a worker's
 * shutdown or retrying after a failure is still waited for. Polls the jobs' states, so a thousand shops
 * need no connection each, and all of them in one round trip (`pollStates`): asking job by job made
 * `trigger --all --wait` spend as much CPU as a third of the syncs it waited for, Redis' included.
 */
export async function waitForSyncs(
  queues: ShopQueues,
  triggered: readonly Triggered[],
  options: WaitOptions,
): Promise<SyncResult[]> {
  const deadline =
    options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
  const results = new Map<string, SyncResult>();
  for (;;) {
    const open = triggered.filter((one) => !results.has(one.shop));
    const states = await pollStates(queues, open);
    for (const [i, one] of open.entries()) {
      const result = await finished(queues, one, states[i] as PolledState);
      if (!result) continue;
      results.set(one.shop, result);
      options.onResult?.(result);
    }
    if (results.size === triggered.length) return triggered.map((one) => results.get(one.shop) as SyncResult);
    if (options.signal.aborted) throw new InterruptedError(`Stopped waiting; ${goesOn(triggered, results)}.`);
    if (Date.now() >= deadline) {
      throw new WaitTimeoutError(
        `Gave up waiting after ${(options.timeoutMs ?? 0) / 1000} s; ${goesOn(triggered, results)}.`,
      );
    }
    await sleep(POLL_MS, undefined, { signal: options.signal }).catch(() => undefined);
  }
}

/** What a poll tells of a job: finished one way or the other, gone from Redis, or still to run. */
type PolledState = 'completed' | 'failed' | 'unknown' | 'unfinished';

/**
 * The state of each job, in one pipeline: in its queue's completed or failed set (BullMQ's
 * `getJobState` answers the same from the same sets, a script call per job), else gone when its hash is.
 */
async function pollStates(queues: ShopQueues, jobs: readonly Triggered[]): Promise<PolledState[]> {
  const pipeline = queues.redis.pipeline();
  for (const one of jobs) {
    const queue = queues.syncOf(one.group);
    pipeline.zscore(queue.toKey('completed'), one.job);
    pipeline.zscore(queue.toKey('failed'), one.job);
    pipeline.exists(queue.toKey(one.job));
  }
  const replies = (await pipeline.exec()) ?? [];
  return jobs.map((_, i) => {
    const [completed, failed, exists] = replies.slice(3 * i, 3 * i + 3).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    if (completed !== null) return 'completed';
    if (failed !== null) return 'failed';
    return exists === 0 ? 'unknown' : 'unfinished';
  });
}

async function finished(
  queues: ShopQueues,
  one: Triggered,
  state: PolledState,
): Promise<SyncResult | undefined> {
  const queue = queues.syncOf(one.group);
  if (state === 'completed' || state === 'failed') {
    const job = await Job.fromId<unknown, SyncSummary>(queue, one.job);
    if (state === 'completed' && job) return { ...one, summary: job.returnvalue };
    const held = job && heldSummaryOf(job);
    if (held) return { ...one, summary: held };
    const reason = job?.failedReason ?? 'the job was removed';
    return {
      ...one,
      error: new SyncJobFailedError(`The sync of shop ${one.shop} (job ${one.job}) failed: ${reason}`),
    };
  }
  if (state === 'unknown') {
    const error = new SyncJobFailedError(
      `The sync of shop ${one.shop} (job ${one.job}) disappeared from the queue.`,
    );
    return { ...one, error };
  }
  return undefined;
}

function goesOn(triggered: readonly Triggered[], done: ReadonlyMap<string, SyncResult>): string {
  const open = triggered.filter((one) => !done.has(one.shop));
  const list = open.map((one) => `shop ${one.shop} (job ${one.job})`).join(', ');
  return `the sync of ${list} goes on in the worker`;
}

/** Any failure talking to Redis as one sentence naming REDIS_URL; shop-sync's own errors pass through. */
export function asQueueError(error: unknown, redisShown: string): unknown {
  if (error instanceof ShopSyncError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new QueueUnavailableError(`Redis at ${redisShown} (REDIS_URL) failed: ${message}.`, {
    cause: error,
  });
}
