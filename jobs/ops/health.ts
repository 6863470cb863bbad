import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { AppConfig, ShopConfig } from '../../src/config/app-config.js';
import { type CompleteRun, overdueAfterSeconds } from './shop-runs.js';

/** Longer than this and Redis counts as not answering: a health probe must answer quickly itself. */
const REDIS_PING_TIMEOUT_MS = 1_000;

export interface ShopHealth {
  readonly schedule: string;
  readonly last_complete_run: number | null;
  readonly last_complete_at: string | null;
  /** Seconds since the last complete run finished (or since the worker started, if it has none). */
  readonly age_seconds: number;
  readonly overdue_after_seconds: number;
  readonly overdue: boolean;
  /** Why the shop's latest run was held (SYNC_MAX_REMOVED), its feeds not replaced; null when it was not. */
  readonly held: string | null;
}

export interface HealthReport {
  readonly status: 'ok' | 'unavailable';
  /** Why the worker is unavailable; absent when it is ok. */
  readonly reason?: string;
  readonly redis: 'ok' | 'not answering';
  readonly worker: 'taking jobs' | 'not taking jobs';
  readonly shops: Readonly<Record<string, ShopHealth>>;
}

/**
 * What `/healthz` answers. Per-shop state lives in memory (read from each store once at start-up and
 * updated as syncs complete), so a probe costs one Redis PING and no SQLite work. An overdue shop is
 * reported but keeps the worker healthy: restarting it would not bring the marketplace back.
 */
export class HealthCheck {
  private readonly runs = new Map<string, CompleteRun | null>();
  private readonly held = new Map<string, string>();
  private readonly startedAt = new Date();

  constructor(
    private readonly config: AppConfig,
    private readonly redis: Redis,
    /** Every BullMQ worker of this process: it takes jobs when all of them do. */
    private readonly workers: readonly Pick<Worker, 'isRunning' | 'isPaused'>[],
  ) {}

  /** Records the shop's latest complete run (at start-up from its store, then as syncs complete). */
  setLastRun(shop: string, run: CompleteRun | null): void {
    if (this.config.shops[shop]) this.runs.set(shop, run);
  }

  /** Records why the shop's latest run was held, or (null) that a run has completed since. */
  setHeld(shop: string, reason: string | null): void {
    if (reason === null) this.held.delete(shop);
    else if (this.config.shops[shop]) this.held.set(shop, reason);
  }

  async report(now = new Date()): Promise<HealthReport> {
    const redisAnswers = await this.pingRedis();
    const takingJobs = this.workers.every((worker) => worker.isRunning() && !worker.isPaused());
    const reasons = [
      redisAnswers ? undefined : `Redis does not answer within ${REDIS_PING_TIMEOUT_MS} ms`,
      takingJobs ? undefined : 'the worker is not taking jobs (stopping or paused)',
    ].filter((reason) => reason !== undefined);
    return {
      status: reasons.length === 0 ? 'ok' : 'unavailable',
      ...(reasons.length > 0 ? { reason: `${reasons.join('; ')}.` } : {}),
      redis: redisAnswers ? 'ok' : 'not answering',
      worker: takingJobs ? 'taking jobs' : 'not taking jobs',
      shops: Object.fromEntries(
        Object.values(this.config.shops).map((shop) => [shop.name, this.shopHealth(shop, now)]),
      ),
    };
  }

  private shopHealth(shop: ShopConfig, now: Date): ShopHealth {
    const run = this.runs.get(shop.name) ?? null;
    const since = run?.finishedAt ?? this.startedAt;
    const age = Math.max(0, Math.round((now.getTime() - since.getTime()) / 1000));
    const allowed = overdueAfterSeconds(shop, now);
    return {
      schedule: shop.schedule,
      last_complete_run: run?.run ?? null,
      last_complete_at: run?.finishedAt.toISOString() ?? null,
      age_seconds: age,
      overdue_after_seconds: allowed,
      overdue: age > allowed,
      held: this.held.get(shop.name) ?? null,
    };
  }

  private async pingRedis(): Promise<boolean> {
    if (this.redis.status !== 'ready') return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), REDIS_PING_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.redis.ping().then((reply) => reply === 'PONG'), timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}
