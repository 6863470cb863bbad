import { type Job, type Queue, UnrecoverableError, type Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { MarketplaceEvents } from '../../src/api/client.js';
import type { AppConfig } from '../../src/config.js';
import type { Logger } from '../../src/log.js';
import type { SyncSummary } from '../../src/sync.js';
import { type ShopJobData, SYNC_JOB } from '../queue.js';
import { HealthCheck } from './health.js';
import { OpsMetrics } from './metrics.js';
import { type OpsServer, startOpsServer } from './server.js';
import { type CompleteRun, readLastCompleteRun } from './shop-runs.js';

export interface OpsTargets {
  readonly redis: Redis;
  readonly queue: Queue;
  // biome-ignore lint/suspicious/noExplicitAny: the worker's job types do not matter here
  readonly worker: Worker<ShopJobData, any>;
}

/** The worker's operations surface: metrics, health and dashboard on OPS_PORT. */
export interface OpsSurface {
  /** The marketplace events of one shop's syncs, for `SyncDeps.events`. */
  events(shop: string): MarketplaceEvents;
  /** Reads each shop's last complete run, follows the worker's jobs and listens on OPS_PORT. */
  start(targets: OpsTargets): Promise<void>;
  close(): Promise<void>;
}

export function opsSurface(config: AppConfig, log: Logger): OpsSurface {
  const metrics = new OpsMetrics(config);
  let server: OpsServer | undefined;
  return {
    events: (shop) => metrics.eventsFor(shop),
    close: async () => server?.close(),
    async start({ redis, queue, worker }) {
      const health = new HealthCheck(config, redis, worker);
      for (const shop of Object.keys(config.shops)) {
        const run = lastRunOrNull(config, shop, log);
        health.setLastRun(shop, run);
        if (run) metrics.lastRun(shop, run);
      }
      followOutcomes(worker, metrics, health);
      if (config.opsPort === 0) return;
      try {
        server = await startOpsServer(config.opsPort, { health, metrics, queue, log });
        log.info({ port: server.port }, 'ops port listening: /healthz, /metrics, /queues');
      } catch (error) {
        // Syncing matters more than being observed: a taken port is reported, not fatal.
        log.error({ err: error, port: config.opsPort }, `OPS_PORT ${config.opsPort} cannot be served`);
      }
    },
  };
}

/** A store that cannot be read is the next sync's problem to report; health starts without its run. */
function lastRunOrNull(config: AppConfig, shop: string, log: Logger): CompleteRun | null {
  try {
    return readLastCompleteRun(config, shop);
  } catch (error) {
    log.warn({ err: error, shop }, 'cannot read the last complete run for health and metrics');
    return null;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the worker's job types do not matter here
function followOutcomes(worker: Worker<ShopJobData, any>, metrics: OpsMetrics, health: HealthCheck): void {
  worker.on('completed', (job: Job<ShopJobData>, result: unknown) => {
    if (job.name !== SYNC_JOB) return;
    const summary = result as SyncSummary;
    const finishedAt = new Date(job.finishedOn ?? Date.now());
    metrics.completed(summary, finishedAt);
    health.setLastRun(summary.shop, {
      run: summary.run,
      finishedAt,
      items: summary.items,
      invalid: summary.invalid,
    });
  });
  worker.on('failed', (job: Job<ShopJobData> | undefined, error: Error) => {
    if (!job || job.name !== SYNC_JOB) return;
    const final = error instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
    const seconds = job.processedOn ? (Date.now() - job.processedOn) / 1000 : undefined;
    metrics.failed(job.data.shop, final ? 'failed' : 'retrying', seconds);
  });
}
