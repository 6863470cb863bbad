import type { Job } from 'bullmq';
import type { AppConfig } from '../src/config/app-config.js';
import type { Logger } from '../src/log.js';
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
 * Makes the schedulers match the configuration: one per configured shop with its cron pattern. A
 * scheduler of a shop this worker does not know is another deployment's (a shard, or the old or new
 * side of a rolling deploy) as long as a worker serves that shop's queue; it is removed only once no
 * worker does, which is when its shop has been dropped everywhere. Idempotent: run it at start-up, on
 * every Redis reconnection and periodically, so that schedules lost with Redis's data come back.
 */
export async function applySchedules(queues: ShopQueues, config: AppConfig, log: Logger): Promise<void> {
  for (const shop of Object.values(config.shops)) {
    await queues.ticks.upsertJobScheduler(
      schedulerId(shop.name),
      { pattern: shop.schedule },
      { name: SCHEDULED_JOB, data: { shop: shop.name }, opts: TICK_JOB_OPTIONS },
    );
    log.debug({ shop: shop.name, schedule: shop.schedule }, 'schedule set');
  }
  for (const scheduler of await queues.ticks.getJobSchedulers()) {
    const id = scheduler.id ?? scheduler.key;
    const shop = id.startsWith(SCHEDULER_PREFIX) ? id.slice(SCHEDULER_PREFIX.length) : undefined;
    if (shop === undefined || config.shops[shop]) continue;
    if ((await queues.of(shop).getWorkersCount()) > 0) continue;
    await queues.ticks.removeJobScheduler(id);
    log.info({ shop }, 'schedule removed: no worker serves the shop any more');
  }
}

/**
 * Re-applies the schedules whenever Redis comes back and every `everyMs`, one application at a time;
 * returns how to stop that. A failed application is logged: the next one may succeed.
 */
export function keepSchedulesApplied(
  queues: ShopQueues,
  config: AppConfig,
  log: Logger,
  everyMs = SCHEDULE_REFRESH_MS,
): () => void {
  let applying = false;
  const apply = (why: string) => {
    if (applying) return;
    applying = true;
    applySchedules(queues, config, log)
      .then(() => log.debug({ why }, 'schedules applied'))
      .catch((error: unknown) =>
        log.warn(
          { code: errorCode(error), reason: (error as Error).message },
          'could not apply the schedules',
        ),
      )
      .finally(() => {
        applying = false;
      });
  };
  const onReady = () => apply('Redis reconnected');
  const { redis } = queues;
  redis.on('ready', onReady);
  const timer = setInterval(() => apply('periodic'), everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    redis.off('ready', onReady);
  };
}

/**
 * A scheduler tick queues the same deduplicated sync as `trigger`, in the shop's own queue: a scheduled
 * and an on-demand sync of one shop never queue twice, and whichever worker takes the tick, the sync
 * goes to a worker that knows the shop.
 */
export function scheduledSyncProcessor(
  queues: ShopQueues,
): (job: Job<ShopJobData, unknown>) => Promise<TickResult> {
  return async (job) => {
    const { shop } = job.data;
    const { job: sync, deduplicated } = await enqueueSync(queues.of(shop), shop);
    return { shop, job: sync.id, deduplicated };
  };
}
