import { Command } from 'commander';
import {
  type JobStatus,
  type QueueStatus,
  queueStatus,
  type ShopStatus,
} from '../../../jobs/ops/queue-status.js';
import { syncQueue } from '../../../jobs/queue.js';
import { connectRedis } from '../../../jobs/redis.js';
import { type CliIO, commandContext, writeLine } from '../io.js';
import { formatTable } from '../table.js';
import { writeLines } from '../write-lines.js';

interface StatusFlags {
  json?: boolean;
}

export function statusCommand(io: CliIO): Command {
  return new Command('status')
    .description(
      'Show the queue (waiting, active, retrying, failed with reasons) and each shop’s schedule, next run and last complete run (Redis: REDIS_URL).',
    )
    .option('--json', 'print one JSON object')
    .action(async (flags: StatusFlags) => {
      const { config } = commandContext(io);
      const redis = await connectRedis(config.redisUrl);
      const queue = syncQueue(redis, config.queuePrefix);
      let status: QueueStatus;
      try {
        status = await queueStatus(queue, config);
      } finally {
        await queue.close();
        await redis.quit();
      }
      if (flags.json) writeLine(io.stdout, JSON.stringify(status));
      else await writeLines(io.stdout, statusText(status));
    });
}

function statusText(status: QueueStatus): string[] {
  const queued = (job: JobStatus) => [job.shop, job.id, job.added_at];
  const failedTitle =
    status.failed_total > status.failed.length
      ? `Failed (${status.failed_total}, the latest ${status.failed.length} shown)`
      : 'Failed';
  return [
    ...jobSection('Waiting', ['SHOP', 'JOB', 'QUEUED'], status.waiting, queued),
    ...jobSection('Active', ['SHOP', 'JOB', 'QUEUED'], status.active, queued),
    ...jobSection(
      'Retrying',
      ['SHOP', 'JOB', 'ATTEMPTS', 'NEXT ATTEMPT AFTER', 'REASON'],
      status.retrying,
      (job) => [
        job.shop,
        job.id,
        `${job.attempts}/${job.max_attempts}`,
        job.next_attempt_after ?? '-',
        job.reason ?? '',
      ],
    ),
    ...jobSection(failedTitle, ['SHOP', 'JOB', 'FAILED AT', 'REASON'], status.failed, (job) => [
      job.shop,
      job.id,
      job.finished_at ?? '-',
      job.reason ?? '',
    ]),
    'Shops:',
    ...formatTable(['SHOP', 'SCHEDULE', 'NEXT RUN', 'LAST COMPLETE RUN'], status.shops.map(shopRow), 80).map(
      indent,
    ),
  ];
}

function shopRow(shop: ShopStatus): string[] {
  const last = shop.last_complete_run;
  return [
    shop.shop,
    shop.schedule,
    shop.scheduled ? shop.next_run : `${shop.next_run} (no worker has set this schedule yet)`,
    last ? `run ${last.run}, ${last.items} items, finished ${last.finished_at}` : 'none',
  ];
}

function jobSection(
  title: string,
  header: readonly string[],
  jobs: readonly JobStatus[],
  row: (job: JobStatus) => string[],
): string[] {
  if (jobs.length === 0) return [`${title}: none`];
  return [`${title}:`, ...formatTable(header, jobs.map(row), 100).map(indent)];
}

function indent(line: string): string {
  return `  ${line}`;
}
