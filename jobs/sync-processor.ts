import { type Job, UnrecoverableError, WaitingError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { MarketplaceEvents } from '../src/api/client.js';
import { RedisTokenStore } from '../src/api/redis-token-store.js';
import { type AppConfig, findShop } from '../src/config.js';
import { InterruptedError, ShopSyncError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import { runSync, type SyncSummary } from '../src/sync.js';
import type { ShopJobData } from './queue.js';

export interface SyncProcessorDeps {
  readonly config: AppConfig;
  readonly log: Logger;
  /** Where the shops' tokens are shared between worker processes. */
  readonly redis: Redis;
  /** Aborted when the worker shuts down: running syncs stop after their current page. */
  readonly stopping: AbortSignal;
  /** The marketplace events of a shop's syncs (metrics). */
  readonly events?: (shop: string) => MarketplaceEvents;
}

/**
 * Runs one shop's sync for a job: the same `runSync` as the CLI's `sync`. Domain errors become BullMQ
 * outcomes here, once: an interrupted sync goes back to waiting (it resumes from its checkpoint without
 * spending an attempt), a non-retryable error fails the job for good with its one-sentence message,
 * and anything else is retried with backoff (a busy shop, an unreachable API, a locked store).
 */
export function syncProcessor(
  deps: SyncProcessorDeps,
): (job: Job<ShopJobData, unknown>, token?: string, signal?: AbortSignal) => Promise<SyncSummary> {
  return async (job, token, signal) => {
    const { config, log, redis } = deps;
    try {
      const shop = findShop(config, job.data.shop);
      return await runSync(shop, {
        config,
        log: log.child({ job: job.id }),
        signal: signal ? AbortSignal.any([signal, deps.stopping]) : deps.stopping,
        events: deps.events?.(shop.name),
        tokenStore: new RedisTokenStore(redis, { prefix: config.queuePrefix, shop: shop.name, logger: log }),
        onProgress: (progress) => {
          job.updateProgress({ ...progress }).catch((error: unknown) => {
            log.warn({ err: error, job: job.id }, 'could not record job progress');
          });
        },
      });
    } catch (error) {
      if (error instanceof InterruptedError) {
        await job.moveToWait(token);
        throw new WaitingError(error.message);
      }
      if (error instanceof ShopSyncError && !error.retryable) throw new UnrecoverableError(error.message);
      throw error;
    }
  };
}
