import { Command } from 'commander';
import {
  type DeliveryStatus,
  type JobStatus,
  type QueueStatus,
  queueStatus,
  type ShopStatus,
} from '../../../jobs/ops/queue-status.js';
import { ShopQueues } from '../../../jobs/queue.js';
import { connectRedis } from '../../../jobs/redis.js';
import { commandContext } from '../context.js';
import { type CliIO, writeLine } from '../io.js';
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
      const { config, log } = commandContext(io);
      const redis = await connectRedis(config.redisUrl);
      const queues = new ShopQueues(redis, config.queuePrefix, log, { readOnly: true });
      let status: QueueStatus;
      try {
        status = await queueStatus(queues, config);
      } finally {
        await queues.close();
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
  const noWorker =
    status.workers === 0
      ? [
          'No worker is connected: nothing runs the waiting or scheduled syncs, nor delivers notifications. Start `shop-sync worker` with these shops configured.',
        ]
      : [];
  const delivery = (d: DeliveryStatus) => [
    d.shop,
    d.event,
    d.delivery,
    String(d.attempts),
    d.next_attempt_after ?? d.finished_at ?? '-',
    d.reason ?? '',
  ];
  const notifications = status.notifications;
  return [
    ...noWorker,
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
    ...formatTable(
      ['SHOP', 'SCHEDULE', 'NEXT RUN', 'WORKER', 'LAST COMPLETE RUN'],
      status.shops.map(shopRow),
      80,
    ).map(indent),
    ...(notifications.waiting.length + notifications.retrying.length + notifications.failed.length === 0
      ? ['Notifications: none pending']
      : [
          `Notifications: ${notifications.waiting.length} waiting`,
          ...section(
            'Notifications retrying',
            ['SHOP', 'EVENT', 'DELIVERY', 'ATTEMPTS', 'NEXT ATTEMPT AFTER', 'REASON'],
            notifications.retrying.map(delivery),
          ),
          ...section(
            'Notifications given up',
            ['SHOP', 'EVENT', 'DELIVERY', 'ATTEMPTS', 'GIVEN UP AT', 'REASON'],
            notifications.failed.map(delivery),
          ),
        ]),
  ];
}

function section(title: string, header: readonly string[], rows: string[][]): string[] {
  return rows.length === 0 ? [] : [`${title}:`, ...formatTable(header, rows, 100).map(indent)];
}

function shopRow(shop: ShopStatus): string[] {
  const last = shop.last_complete_run;
  return [
    shop.shop,
    shop.schedule ?? '-',
    shop.next_run ?? 'not scheduled: no worker has applied a schedule',
    shop.worker_connected ? 'connected' : 'none connected',
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
