import type { Job, Queue } from 'bullmq';
import type { Logger } from '../src/log.js';
import { DELIVER_JOB, DELIVERY_JOB_OPTIONS } from './deliveries.js';
import { forgetGroup, readGroups } from './groups.js';
import {
  enqueueSync,
  legacyNotifyQueueName,
  legacySyncQueueName,
  notifyQueueName,
  type ShopQueues,
  SYNC_JOB,
  syncQueueName,
} from './queue.js';

/** The states of a job that has not finished: what an orphaned queue must not keep. */
const UNFINISHED = ['waiting', 'prioritized', 'delayed', 'active'] as const;

/** Where an orphan's jobs go: the worker's own group and its shops. */
export interface Adopter {
  readonly group: string;
  readonly shops: ReadonlySet<string>;
}

/**
 * Moves into the worker's group the unfinished jobs of its shops that wait where no worker will take
 * them: in a group with no worker connected (a shop moved to another group, a shard gone, a worker
 * killed), and in the per-shop queues of versions before groups (`sync-<shop>`, `notify-<shop>`) once no
 * older worker serves them. A sync keeps its job id and joins a sync of its shop not yet started; a
 * notification keeps its delivery id and its time, so its 24 h still count. An active job still locked is
 * left: its worker lives. An old queue left with nothing unfinished is deleted; so is a group found without
 * workers at two adoptions in a row (not one restarting, or between connections) with nothing unfinished,
 * so that Redis keeps nothing for shops no worker serves. Returns the adoption to run now and then.
 */
export function orphanAdopter(queues: ShopQueues, adopter: Adopter, log: Logger): () => Promise<void> {
  let deadBefore = new Set<string>();
  return async () => {
    const groups = await readGroups(queues);
    const dead = groups.filter((one) => one.group !== adopter.group && one.workers === 0);
    for (const orphan of dead) {
      const left = await Promise.all([
        adoptFrom(queues.named(syncQueueName(orphan.group)), queues, adopter, log),
        adoptFrom(queues.named(notifyQueueName(orphan.group)), queues, adopter, log),
      ]);
      if (deadBefore.has(orphan.group) && left.every((count) => count === 0)) {
        await Promise.all(
          [syncQueueName, notifyQueueName].map((name) => queues.named(name(orphan.group)).obliterate()),
        );
        await forgetGroup(queues.redis, queues.prefix, orphan.group);
        log.info({ group: orphan.group }, 'group removed: no worker serves it and nothing waits in it');
      }
    }
    deadBefore = new Set(dead.map((one) => one.group));
    for (const shop of await shopsWithLegacyQueues(queues, adopter.shops)) {
      for (const name of [legacySyncQueueName(shop), legacyNotifyQueueName(shop)]) {
        const queue = queues.named(name);
        if ((await queue.getWorkersCount()) > 0) continue;
        if ((await adoptFrom(queue, queues, adopter, log)) === 0) await queue.obliterate();
      }
    }
  };
}

/** The shops that still have a queue of their own from before groups (one round trip for them all). */
async function shopsWithLegacyQueues(queues: ShopQueues, shops: ReadonlySet<string>): Promise<string[]> {
  const names = [...shops];
  const pipeline = queues.redis.pipeline();
  for (const shop of names) {
    pipeline.exists(`${queues.prefix}:${legacySyncQueueName(shop)}:meta`);
    pipeline.exists(`${queues.prefix}:${legacyNotifyQueueName(shop)}:meta`);
  }
  const found = (await pipeline.exec()) ?? [];
  return names.filter((_, i) => found[2 * i]?.[1] === 1 || found[2 * i + 1]?.[1] === 1);
}

/**
 * Moves `from`'s unfinished jobs of the adopter's shops into its group. Returns how many unfinished jobs
 * stay (another group's shops, or locked).
 */
async function adoptFrom(from: Queue, queues: ShopQueues, adopter: Adopter, log: Logger): Promise<number> {
  let left = 0;
  for (const job of await from.getJobs([...UNFINISHED])) {
    const shop = (job.data as { shop?: unknown } | undefined)?.shop;
    if (typeof shop !== 'string' || !adopter.shops.has(shop) || !(await unlocked(queues, from, job))) {
      left += 1;
      continue;
    }
    const moved = await moveJob(job, shop, queues, adopter.group);
    log.info({ shop, job: job.id, from: from.name, to: moved }, 'job moved from a queue no worker serves');
  }
  return left;
}

/** A job no live worker holds: not active, or active with its lock run out (its worker is gone). */
async function unlocked(queues: ShopQueues, from: Queue, job: Job): Promise<boolean> {
  if (!(await job.isActive())) return true;
  return (await queues.redis.exists(`${queues.prefix}:${from.name}:${job.id}:lock`)) === 0;
}

/**
 * Adds `job` to the group's queue of its kind, then removes it where it was; returns where it went. A
 * job that is neither a sync nor a notification would fail wherever it ran: it is dropped.
 */
async function moveJob(job: Job, shop: string, queues: ShopQueues, group: string): Promise<string> {
  let to: Queue | undefined;
  if (job.name === SYNC_JOB) {
    to = queues.syncOf(group);
    await enqueueSync(to, shop, { jobId: String(job.id) });
  } else if (job.name === DELIVER_JOB) {
    to = queues.notifyOf(group);
    await to.add(DELIVER_JOB, job.data, {
      ...DELIVERY_JOB_OPTIONS,
      jobId: String(job.id),
      timestamp: job.timestamp,
    });
  }
  await job.remove();
  return to?.name ?? 'nowhere: it is neither a sync nor a notification';
}
