import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { MarketplaceEvents } from '../../src/api/client.js';
import { type AppConfig, readSecret } from '../../src/config/app-config.js';
import type { ErrorCode } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type { JobOutcome } from '../job-events.js';
import { HealthCheck } from './health.js';
import { type NotificationOutcome, OpsMetrics } from './metrics.js';
import { type OpsServer, startOpsServer } from './ops-server.js';
import { type CompleteRun, readLastCompleteRun } from './shop-runs.js';

/** The code of a job failed because its run was held (`RemovalsHeldError`). */
const HELD: ErrorCode = 'REMOVALS_HELD';

export interface OpsTargets {
  readonly redis: Redis;
  /** The queues the dashboard shows and whose counts /metrics exports. */
  readonly queues: readonly Queue[];
  /** The process's BullMQ workers: it takes jobs when all of them do. */
  readonly workers: readonly Worker[];
  /** Subscribes to each sync's outcome. */
  readonly onOutcome: (listener: (outcome: JobOutcome) => void) => void;
}

/** The worker's operations surface: metrics, health and dashboard on OPS_PORT. */
export interface OpsSurface {
  /** The marketplace events of one shop's syncs, for `SyncDeps.events`. */
  events(shop: string): MarketplaceEvents;
  /** Counts a notification's delivery attempt. */
  notified(shop: string, outcome: NotificationOutcome): void;
  /** Reads each shop's last complete run, follows the worker's jobs and listens on OPS_PORT. */
  start(targets: OpsTargets): Promise<void>;
  close(): Promise<void>;
}

/** Reads the ops login's password now: a missing file stops the worker at start-up, naming the setting. */
export function opsSurface(config: AppConfig, log: Logger): OpsSurface {
  const login = config.opsLogin
    ? { username: config.opsLogin.username, password: readSecret(config.opsLogin.password) }
    : undefined;
  const metrics = new OpsMetrics(config);
  let server: OpsServer | undefined;
  return {
    events: (shop) => metrics.eventsFor(shop),
    notified: (shop, outcome) => metrics.notification(shop, outcome),
    close: async () => server?.close(),
    async start({ redis, queues, workers, onOutcome }) {
      const health = new HealthCheck(config, redis, workers);
      for (const shop of Object.keys(config.shops)) {
        const run = lastRunOrNull(config, shop, log);
        health.setLastRun(shop, run);
        if (run) metrics.lastRun(shop, run);
        health.setHeld(shop, run?.held ?? null);
      }
      onOutcome((outcome) => record(outcome, metrics, health));
      if (config.opsPort === 0) return;
      try {
        server = await startOpsServer(config.opsPort, {
          host: config.opsHost,
          login,
          health,
          metrics,
          queues,
          log,
        });
        log.info(
          { host: config.opsHost, port: server.port, login: login !== undefined },
          'ops port listening: /healthz, /metrics, /queues',
        );
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

/**
 * A sync's outcome in the metrics, a completed one as the shop's last complete run for health, and a
 * held one as the shop's held run until a run completes.
 */
function record(outcome: JobOutcome, metrics: OpsMetrics, health: HealthCheck): void {
  if (outcome.code === HELD) {
    metrics.failed(outcome.shop, 'held', undefined);
    health.setHeld(outcome.shop, outcome.reason ?? HELD);
    return;
  }
  if (outcome.outcome !== 'completed' || !outcome.summary) {
    if (outcome.outcome !== 'completed') metrics.failed(outcome.shop, outcome.outcome, undefined);
    return;
  }
  const { summary } = outcome;
  health.setHeld(summary.shop, null);
  const finishedAt = new Date();
  metrics.completed(summary, finishedAt);
  health.setLastRun(summary.shop, {
    run: summary.run,
    finishedAt,
    items: summary.items,
    invalid: summary.invalid,
  });
}
