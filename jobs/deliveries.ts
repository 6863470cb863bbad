import { type Job, type JobsOptions, UnrecoverableError, Worker, type WorkerOptions } from 'bullmq';
import { z } from 'zod';
import { type AppConfig, readSecret } from '../src/config/app-config.js';
import { DeliveryError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import { deliverOnce, shownTarget } from '../src/notify/deliver.js';
import { NOTIFY_EVENTS, type Notification } from '../src/notify/payload.js';
import { logErrors } from './log-errors.js';
import type { ShopQueues } from './queue.js';

export const DELIVER_JOB = 'deliver';

/**
 * What a delivery job carries: the notification itself, its body fixed, so that every attempt sends and
 * signs the same bytes. Neither the URL (a webhook URL may hold its own secret) nor the signing secret
 * goes to Redis: the worker that sends it reads both from its configuration.
 */
export const DeliveryJobData = z.strictObject({
  shop: z.string(),
  event: z.enum(NOTIFY_EVENTS),
  delivery: z.string(),
  body: z.string(),
});

/** How long a notification is retried before it fails for good. */
export const DELIVERY_WINDOW_MS = 24 * 3600_000;
/** The first retry's wait; each next one doubles, up to MAX_WAIT_MS. */
export const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 3600_000;
/**
 * Deliveries at once across the group's shops: they wait on receivers (10 s at most each), not on the
 * CPU or the store.
 */
const DELIVERIES_AT_ONCE = 32;

/**
 * Attempts enough for the window at the longest wait; the window itself is enforced by the processor,
 * which gives up once the next attempt would start after it.
 */
export const DELIVERY_JOB_OPTIONS: JobsOptions = {
  attempts: 1_000,
  backoff: { type: 'doubling' },
  // Gone once taken: a delivery id that comes back (a store started afresh) is a new delivery.
  removeOnComplete: true,
  removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
};

/** The wait before retry `attempt` (1: the first retry), doubling with a little jitter. */
export function retryWait(attempt: number): number {
  const wait = Math.min(FIRST_WAIT_MS * 2 ** Math.max(attempt - 1, 0), MAX_WAIT_MS);
  return Math.round(wait * (0.9 + Math.random() * 0.2));
}

/**
 * Queues a shop's notification for the delivery workers of the shop's group. The job id is the delivery
 * id, so a notification queued twice (a failed run's attempts) is one delivery while it is pending.
 */
export async function queueNotification(
  queues: ShopQueues,
  group: string,
  notification: Notification,
): Promise<void> {
  await queues.notifyOf(group).add(
    DELIVER_JOB,
    {
      shop: notification.shop,
      event: notification.event,
      delivery: notification.delivery,
      body: notification.body,
    },
    // BullMQ's job ids cannot hold ':'.
    { ...DELIVERY_JOB_OPTIONS, jobId: notification.delivery.replaceAll(':', '@') },
  );
}

/**
 * The group's delivery worker, when a shop of it has a notify URL: each job is one attempt; a failed
 * attempt is retried by BullMQ after `retryWait`, for DELIVERY_WINDOW_MS from the job's creation, across
 * worker restarts (the job waits in Redis). A shop's URL or the secret removed from the configuration
 * meanwhile fails the job for good, saying so.
 */
export function deliveryWorker(
  config: AppConfig,
  queues: ShopQueues,
  group: string,
  settings: WorkerOptions,
  log: Logger,
  counted: (shop: string, outcome: 'delivered' | 'retrying' | 'failed') => void,
): Worker | undefined {
  if (!Object.values(config.shops).some((shop) => shop.notifyUrl !== undefined)) return undefined;
  const worker = new Worker(queues.notifyOf(group).name, deliveryProcessor(config, log), {
    ...settings,
    concurrency: DELIVERIES_AT_ONCE,
    settings: { backoffStrategy: (attemptsMade) => retryWait(attemptsMade) },
  });
  worker.on('failed', (job, error) => {
    const shop = job?.data?.shop;
    counted(shop, error instanceof UnrecoverableError ? 'failed' : 'retrying');
    if (job)
      log.warn(
        { shop, delivery: job.data?.delivery, attempts: job.attemptsMade, reason: error.message },
        'notification not taken',
      );
  });
  worker.on('completed', (job) => {
    counted(job.data?.shop, 'delivered');
    log.info(
      { shop: job.data?.shop, delivery: job.data?.delivery, attempts: job.attemptsMade + 1 },
      'notification delivered',
    );
  });
  return logErrors(worker, log, 'worker');
}

function deliveryProcessor(config: AppConfig, log: Logger): (job: Job) => Promise<void> {
  return async (job) => {
    const parsed = DeliveryJobData.safeParse(job.data);
    if (!parsed.success || !config.shops[parsed.data.shop])
      throw new UnrecoverableError(`The delivery job's data is not a notification of a shop of this worker.`);
    const { shop } = parsed.data;
    const url = config.shops[shop]?.notifyUrl;
    if (url === undefined)
      throw new UnrecoverableError(`Shop ${shop} has no notify URL any more: the notification is dropped.`);
    // Read at each attempt: a rotated secret file is used from then on.
    const secret = config.notifySecret ? readSecret(config.notifySecret) : undefined;
    try {
      await deliverOnce(url, parsed.data, secret);
    } catch (error) {
      if (!(error instanceof DeliveryError)) throw error;
      const nextAt = Date.now() + retryWait(job.attemptsMade + 1);
      if (nextAt - job.timestamp > DELIVERY_WINDOW_MS) {
        log.error(
          { shop, delivery: parsed.data.delivery, target: shownTarget(url) },
          'notification given up after 24 h',
        );
        throw new UnrecoverableError(`${error.message} Given up after 24 h of retries.`);
      }
      throw error;
    }
  };
}
