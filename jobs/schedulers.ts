import type { Job, Queue } from 'bullmq';
import type { AppConfig } from '../src/config.js';
import type { Logger } from '../src/log.js';
import type { SyncSummary } from '../src/sync.js';
import { enqueueSync, SCHEDULED_JOB, type ShopJobData } from './queue.js';

const SCHEDULER_PREFIX = 'scheduled-sync:';

/** The id of a shop's scheduler: one per shop, so that upserting replaces its schedule. */
export function schedulerId(shop: string): string {
  return `${SCHEDULER_PREFIX}${shop}`;
}

/** What a scheduler tick did: the sync it queued, or the one already queued or running for the shop. */
export interface TickResult {
  readonly shop: string;
  readonly job: string | undefined;
  readonly deduplicated: boolean;
}

/**
 * Makes the queue's schedulers match the configuration: one per configured shop with its cron
 * pattern, and none for shops no longer configured (a scheduler outlives the worker that created it).
 */
export async function syncSchedulers(
  queue: Queue<ShopJobData, SyncSummary>,
  config: AppConfig,
  log: Logger,
): Promise<void> {
  const shops = Object.values(config.shops);
  for (const shop of shops) {
    await queue.upsertJobScheduler(
      schedulerId(shop.name),
      { pattern: shop.schedule },
      {
        name: SCHEDULED_JOB,
        data: { shop: shop.name },
        opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
      },
    );
    log.info({ shop: shop.name, schedule: shop.schedule }, 'schedule set');
  }
  for (const scheduler of await queue.getJobSchedulers()) {
    const id = scheduler.id ?? scheduler.key;
    const shop = id.startsWith(SCHEDULER_PREFIX) ? id.slice(SCHEDULER_PREFIX.length) : undefined;
    if (shop !== undefined && !config.shops[shop]) {
      await queue.removeJobScheduler(id);
      log.info({ shop }, 'schedule removed: the shop is no longer configured');
    }
  }
}

/**
 * A scheduler tick queues the same deduplicated sync job as `trigger`: BullMQ schedulers cannot carry
 * a deduplication id, and this way a scheduled and an on-demand sync of one shop never queue twice.
 */
export function scheduledSyncProcessor(
  queue: Queue<ShopJobData, SyncSummary>,
): (job: Job<ShopJobData, unknown>) => Promise<TickResult> {
  return async (job) => {
    const { job: sync, deduplicated } = await enqueueSync(queue, job.data.shop);
    return { shop: job.data.shop, job: sync.id, deduplicated };
  };
}
