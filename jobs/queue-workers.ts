import { type Job, MetricsTime, UnrecoverableError, Worker, type WorkerOptions } from 'bullmq';
import type { AppConfig } from '../src/config/app-config.js';
import type { Logger } from '../src/log.js';
import { deliveryWorker } from './deliveries.js';
import { followSyncJobs, type Outcomes } from './job-events.js';
import { logErrors } from './log-errors.js';
import type { NotificationOutcome } from './ops/metrics.js';
import { SCHEDULED_JOB, ShopJobData, type ShopQueues, TICK_QUEUE } from './queue.js';
import { scheduledSyncProcessor, type TickResult } from './schedulers.js';
import { type SyncProcessorDeps, syncProcessor } from './sync-processor.js';

/**
 * BullMQ renews a job's lock at half this period; a job whose worker was killed is found stalled once
 * its lock has run out, at the next stalled check (every STALLED_CHECK_MS): a killed sync is running
 * again within LOCK_DURATION_MS + STALLED_CHECK_MS = 45 s, and resumes from its checkpoint. The event
 * loop never blocks for anything near 15 s (staging and commit work in short slices), so a live job
 * does not lose its lock.
 */
export const LOCK_DURATION_MS = 30_000;
export const STALLED_CHECK_MS = 15_000;
/**
 * A job found stalled this many times fails instead of running again. Not 1 (BullMQ's default): a
 * worker killed by a node drain or an OOM kill of a neighbour should not cost the sync its run. Not
 * unbounded: a sync that kills its own worker every time (a shop too big for the container's memory)
 * must stop taking workers down, and its failure reason says it stalled.
 */
export const MAX_STALLED_COUNT = 3;

export interface QueueWorkersContext {
  readonly config: AppConfig;
  readonly queues: ShopQueues;
  /** The group of the worker's shops: its sync and delivery queues. */
  readonly group: string;
  /** Syncs at once (WORKER_CONCURRENCY). */
  readonly concurrency: number;
  readonly log: Logger;
  readonly outcomes: Outcomes;
  /** Counts a notification's delivery attempt (the ops port's metrics). */
  readonly notified: (shop: string, outcome: NotificationOutcome) => void;
}

/**
 * The process's BullMQ workers, each with one blocking connection, whatever the number of shops: the
 * group's syncs (`concurrency` at once), the scheduler ticks, and the group's deliveries when a shop has
 * a notify URL. Resolved once every one of them is connected.
 */
export async function startQueueWorkers(
  context: QueueWorkersContext,
  deps: SyncProcessorDeps,
): Promise<Worker[]> {
  const { config, queues, group, log, outcomes } = context;
  const settings: WorkerOptions = {
    connection: queues.redis,
    prefix: config.queuePrefix,
    concurrency: 1,
    lockDuration: LOCK_DURATION_MS,
    stalledInterval: STALLED_CHECK_MS,
    maxStalledCount: MAX_STALLED_COUNT,
    // BullMQ counts completed and failed jobs only when asked to; /metrics exports the counts.
    metrics: { maxDataPoints: MetricsTime.ONE_WEEK },
  };
  const syncs = new Worker(queues.syncOf(group).name, syncProcessor(deps), {
    ...settings,
    concurrency: context.concurrency,
  });
  followSyncJobs(syncs, log, outcomes);
  const workers = [syncs, tickWorker(context, settings)];
  const deliveries = deliveryWorker(config, queues, group, settings, log, context.notified);
  if (deliveries) workers.push(deliveries);
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  return workers;
}

function tickWorker({ queues, group, config, log }: QueueWorkersContext, settings: WorkerOptions): Worker {
  const tick = scheduledSyncProcessor(queues, { group, shops: new Set(Object.keys(config.shops)) });
  const worker = new Worker<unknown, TickResult>(
    TICK_QUEUE,
    (job) => {
      const data = ShopJobData.safeParse(job.data);
      if (job.name !== SCHEDULED_JOB || !data.success) {
        throw new UnrecoverableError(
          `Job "${job.name}" with data ${JSON.stringify(job.data)} is not a scheduler tick of a shop.`,
        );
      }
      return tick(job as Job<ShopJobData>);
    },
    settings,
  );
  worker.on('failed', (job, error) =>
    log.error({ job: job?.id, reason: error.message }, 'scheduler tick failed'),
  );
  logErrors(worker, log, 'worker');
  return worker as Worker;
}
