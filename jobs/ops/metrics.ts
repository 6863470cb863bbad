import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { MarketplaceEvents } from '../../src/api/client.js';
import type { AppConfig } from '../../src/config/app-config.js';
import type { SyncSummary } from '../../src/sync/index.js';

/**
 * How a sync job ended: `held` read everything but would have removed more than SYNC_MAX_REMOVED allows,
 * `retrying` failed an attempt and will run again, `failed` will not.
 */
export type SyncOutcome = 'complete' | 'held' | 'retrying' | 'failed';

/** How a notification's delivery attempt ended: `failed` is given up for good. */
export type NotificationOutcome = 'delivered' | 'retrying' | 'failed';

/**
 * The worker's Prometheus metrics. Every label set is keyed by a configured shop (plus a bounded
 * outcome, grant or HTTP status), so cardinality grows with the number of shops only.
 */
export class OpsMetrics {
  readonly registry = new Registry();
  private readonly shops: ReadonlySet<string>;
  private readonly syncs = new Counter({
    name: 'shop_sync_syncs_total',
    help: 'Sync jobs finished, by shop and outcome (complete, held, retrying, failed).',
    labelNames: ['shop', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly items = new Gauge({
    name: 'shop_sync_items',
    help: 'Items in the shop’s latest complete run.',
    labelNames: ['shop'] as const,
    registers: [this.registry],
  });
  private readonly invalid = new Gauge({
    name: 'shop_sync_items_invalid',
    help: 'Items the marketplace sent that failed validation in the shop’s latest complete run.',
    labelNames: ['shop'] as const,
    registers: [this.registry],
  });
  private readonly lastComplete = new Gauge({
    name: 'shop_sync_last_complete_run_timestamp_seconds',
    help: 'When the shop’s latest complete run finished (Unix time).',
    labelNames: ['shop'] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: 'shop_sync_sync_duration_seconds',
    help: 'Duration of sync jobs, by shop and outcome.',
    labelNames: ['shop', 'outcome'] as const,
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800],
    registers: [this.registry],
  });
  private readonly responses = new Counter({
    name: 'shop_sync_marketplace_responses_total',
    help: 'Marketplace HTTP responses by shop and status (network: no answer).',
    labelNames: ['shop', 'status'] as const,
    registers: [this.registry],
  });
  private readonly tokens = new Counter({
    name: 'shop_sync_marketplace_tokens_total',
    help: 'Marketplace tokens obtained by shop and grant (password: a login, refresh_token: a refresh).',
    labelNames: ['shop', 'grant'] as const,
    registers: [this.registry],
  });

  private readonly notifications = new Counter({
    name: 'shop_sync_notifications_total',
    help: 'Notification delivery attempts (NOTIFY_URL) by shop and outcome (delivered, retrying, failed: given up).',
    labelNames: ['shop', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor(config: AppConfig) {
    // The process's own figures (CPU, memory, event-loop lag: a blocked loop costs BullMQ its locks).
    collectDefaultMetrics({ register: this.registry, prefix: 'shop_sync_' });
    this.shops = new Set(Object.keys(config.shops));
    for (const shop of this.shops) {
      for (const outcome of ['complete', 'held', 'retrying', 'failed'] as const)
        this.syncs.inc({ shop, outcome }, 0);
    }
  }

  /** The marketplace events of one shop's syncs, counted under its name. */
  eventsFor(shop: string): MarketplaceEvents {
    return {
      response: (status) => this.responses.inc({ shop: this.label(shop), status: String(status) }),
      token: (grant) => this.tokens.inc({ shop: this.label(shop), grant }),
    };
  }

  completed(summary: SyncSummary, finishedAt: Date): void {
    const shop = this.label(summary.shop);
    this.syncs.inc({ shop, outcome: 'complete' });
    this.duration.observe({ shop, outcome: 'complete' }, summary.duration_ms / 1000);
    this.lastRun(shop, { items: summary.items, invalid: summary.invalid, finishedAt });
  }

  failed(shop: string, outcome: Exclude<SyncOutcome, 'complete'>, seconds: number | undefined): void {
    this.syncs.inc({ shop: this.label(shop), outcome });
    if (seconds !== undefined) this.duration.observe({ shop: this.label(shop), outcome }, seconds);
  }

  notification(shop: string, outcome: NotificationOutcome): void {
    this.notifications.inc({ shop: this.label(shop), outcome });
  }

  /** The figures of the shop's latest complete run (at start-up, from its store). */
  lastRun(shop: string, run: { items: number; invalid: number; finishedAt: Date }): void {
    const labels = { shop: this.label(shop) };
    this.items.set(labels, run.items);
    this.invalid.set(labels, run.invalid);
    this.lastComplete.set(labels, run.finishedAt.getTime() / 1000);
  }

  /** A job naming a shop that is not configured (an old job) is counted apart, under one label. */
  private label(shop: string): string {
    return this.shops.has(shop) ? shop : '(unconfigured)';
  }
}
