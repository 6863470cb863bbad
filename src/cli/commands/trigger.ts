import { type Job, QueueEvents } from 'bullmq';
import { Command } from 'commander';
import { SyncJobFailedError } from '../../../jobs/errors.js';
import { enqueueSync, QUEUE_NAME, syncQueue } from '../../../jobs/queue.js';
import { connectRedis } from '../../../jobs/redis.js';
import { findShop } from '../../config.js';
import { InterruptedError } from '../../errors.js';
import type { SyncSummary } from '../../sync.js';
import { type CliIO, commandContext, writeLine } from '../io.js';
import { summaryJson, summaryText } from './sync.js';

interface TriggerFlags {
  shop?: string;
  wait?: boolean;
  json?: boolean;
}

export function triggerCommand(io: CliIO): Command {
  return new Command('trigger')
    .description('Queue a sync of a shop now for the worker; with --wait, wait for it and report like sync.')
    .option('--shop <name>', 'the shop (default: the configured one)')
    .option('--wait', 'wait until the sync has finished and print its summary')
    .option('--json', 'print the result as one JSON object')
    .action(async (flags: TriggerFlags) => {
      const { config } = commandContext(io);
      const shop = findShop(config, flags.shop);
      const redis = await connectRedis(config.redisUrl);
      const queue = syncQueue(redis, config.queuePrefix);
      const events = flags.wait
        ? new QueueEvents(QUEUE_NAME, { connection: redis, prefix: config.queuePrefix })
        : undefined;
      try {
        await events?.waitUntilReady();
        const { job, deduplicated } = await enqueueSync(queue, shop.name);
        const note = deduplicated
          ? `A sync of shop ${shop.name} is already queued or running (job ${job.id}).`
          : `Queued a sync of shop ${shop.name} (job ${job.id}).`;
        if (!events) {
          writeLine(
            io.stdout,
            flags.json ? JSON.stringify({ shop: shop.name, job: job.id, deduplicated }) : note,
          );
          return;
        }
        writeLine(io.stderr, `${note} Waiting for it to finish.`);
        const summary = await finished(job, events, io.signal, shop.name);
        writeLine(io.stdout, flags.json ? JSON.stringify(summaryJson(summary)) : summaryText(summary));
      } finally {
        await events?.close();
        await queue.close();
        await redis.quit();
      }
    });
}

/** The job's summary once a worker completes it; its failure reason, or the user stopping the wait. */
async function finished(
  job: Job<unknown, SyncSummary>,
  events: QueueEvents,
  signal: AbortSignal,
  shop: string,
): Promise<SyncSummary> {
  const stopped = new Promise<never>((_, reject) => {
    const stop = () =>
      reject(
        new InterruptedError(
          `Stopped waiting; the sync of shop ${shop} (job ${job.id}) goes on in the worker.`,
        ),
      );
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  try {
    return await Promise.race([job.waitUntilFinished(events), stopped]);
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new SyncJobFailedError(`The sync of shop ${shop} (job ${job.id}) failed: ${reason}`);
  }
}
