import { type Job, UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { AppConfig } from '../src/config/app-config.js';
import type { Logger } from '../src/log.js';
import { groupServing, readGroups } from './groups.js';
import { errorCode } from './log-errors.js';
import { enqueueSync, SCHEDULED_JOB, type ShopJobData, type ShopQueues, TICK_JOB_OPTIONS } from './queue.js';

const SCHEDULER_PREFIX = 'scheduled-sync:';
/** Schedules are re-applied this often, so that schedules lost with Redis's data come back. */
export const SCHEDULE_REFRESH_MS = 60_000;

/** The id of a shop's scheduler: one per shop, so that upserting replaces its schedule. */
export function schedulerId(shop: string): string {
  return `${SCHEDULER_PREFIX}${shop}`;
}

/** What a scheduler tick did: the sync it queued, or the one of the shop that had not started yet. */
export interface TickResult {
  readonly shop: string;
  readonly job: string | undefined;
  readonly deduplicated: boolean;
}

/**
 * Makes the schedulers match the configuration: one per configured shop with its cron pattern. Only a
 * scheduler that is missing or has another pattern is written (an upsert costs Redis milliseconds: a
 * thousand shops' would take seconds at each start and each minute). A scheduler of a shop this worker
 * does not know is another group's (a shard, or the old or new side of a rolling deploy) as long as a
 * group with a worker connected serves that shop; it is removed only once none does, which is when its
 * shop has been dropped everywhere. Idempotent: run it at start-up, on every Redis reconnection and
 * periodically, so that schedules lost with Redis's data come back.
 */
export async function applySchedules(queues: ShopQueues, config: AppConfig, log: Logger): Promise<void> {
  const applied = new Map(
    (await queues.ticks.getJobSchedulers()).map((scheduler) => [scheduler.id ?? scheduler.key, scheduler]),
  );
  const changed = Object.values(config.shops).filter(
    (shop) => applied.get(schedulerId(shop.name))?.pattern !== shop.schedule,
  );
  await Promise.all(
    changed.map((shop) =>
      queues.ticks.upsertJobScheduler(
        schedulerId(shop.name),
        { pattern: shop.schedule },
        { name: SCHEDULED_JOB, data: { shop: shop.name }, opts: TICK_JOB_OPTIONS },
      ),
    ),
  );
  if (changed.length > 0) log.debug({ shops: changed.length }, 'schedules set');
  const foreign = [...applied.keys()].filter(
    (id) => id.startsWith(SCHEDULER_PREFIX) && !config.shops[id.slice(SCHEDULER_PREFIX.length)],
  );
  if (foreign.length === 0) return;
  const groups = await readGroups(queues);
  for (const id of foreign) {
    const shop = id.slice(SCHEDULER_PREFIX.length);
    if (groupServing(groups, shop) !== undefined) continue;
    await queues.ticks.removeJobScheduler(id);
    log.info({ shop }, 'schedule removed: no worker serves the shop any more');
  }
}

/**
 * Runs `tend` (the schedules applied, the group registered, orphans adopted) whenever Redis comes back
 * and every `everyMs`, one run at a time; returns how to stop that. A failed run is logged: the next
 * one may succeed.
 */
export function keepTending(
  redis: Redis,
  tend: () => Promise<void>,
  log: Logger,
  everyMs = SCHEDULE_REFRESH_MS,
): () => void {
  let tending = false;
  const run = (why: string) => {
    if (tending) return;
    tending = true;
    tend()
      .then(() => log.debug({ why }, 'schedules applied'))
      .catch((error: unknown) =>
        log.warn(
          { code: errorCode(error), reason: (error as Error).message },
          'could not apply the schedules',
        ),
      )
      .finally(() => {
        tending = false;
      });
  };
  const onReady = () => run('Redis reconnected');
  redis.on('ready', onReady);
  const timer = setInterval(() => run('periodic'), everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    redis.off('ready', onReady);
  };
}

/** The group a worker serves, by name and shops. */
export interface OwnGroup {
  readonly group: string;
  readonly shops: ReadonlySet<string>;
}

/**
 * A scheduler tick queues the same deduplicated sync as `trigger`, in the queue of a group that serves
 * the shop: the worker's own when it has the shop (no look-up), else the newest group with a worker
 * connected that registered it. So whichever worker takes the tick, the sync goes to a worker that knows
 * the shop; a tick of a shop no worker serves fails, saying so (the next tick tries again).
 */
export function scheduledSyncProcessor(
  queues: ShopQueues,
  own: OwnGroup,
): (job: Job<ShopJobData, unknown>) => Promise<TickResult> {
  return async (job) => {
    const { shop } = job.data;
    const group = own.shops.has(shop) ? own.group : groupServing(await readGroups(queues), shop);
    if (group === undefined)
      throw new UnrecoverableError(`No worker serves shop ${shop}: its tick queues nothing.`);
    const { job: sync, deduplicated } = await enqueueSync(queues.syncOf(group), shop);
    return { shop, job: sync.id, deduplicated };
  };
}
