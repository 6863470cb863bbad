import { existsSync } from 'node:fs';
import { CronExpressionParser } from 'cron-parser';
import type { AppConfig, ShopConfig } from '../../src/config/app-config.js';
import { fromSqlite, openStore } from '../../src/store/open.js';
import { shopPaths } from '../../src/store/paths.js';
import { getRun, latestCompleteRun, latestHeldReason } from '../../src/store/run-records.js';

/** A shop's latest complete run, as health and `status` report it. */
export interface CompleteRun {
  readonly run: number;
  readonly finishedAt: Date;
  readonly items: number;
  readonly invalid: number;
  /** Why the shop's latest run, after this one, was held; absent when it was not. */
  readonly held?: string;
}

/** Scheduled runs a shop may miss before health calls it overdue: one slow or failed run is normal. */
const MISSED_RUNS_BEFORE_OVERDUE = 3;

/** The shop's latest complete run from its store (opened once and closed), or null if it has none. */
export function readLastCompleteRun(config: AppConfig, shop: string): CompleteRun | null {
  const file = shopPaths(config.dataDir, shop).store;
  if (!existsSync(file)) return null;
  const store = openStore(file);
  try {
    const run = latestCompleteRun(store);
    const summary = run === null ? undefined : getRun(store, run);
    if (!summary?.finished_at) return null;
    const held = latestHeldReason(store);
    return {
      run: summary.run,
      finishedAt: new Date(summary.finished_at),
      items: summary.items,
      invalid: summary.invalid,
      ...(held === null ? {} : { held }),
    };
  } catch (error) {
    throw fromSqlite(`Cannot read store ${file}`, file, error);
  } finally {
    store.close();
  }
}

/**
 * How long a shop may go without a complete run: a few periods of its schedule (the gap between its
 * next two firings), so a cron of every 15 minutes tolerates 45.
 */
export function overdueAfterSeconds(shop: ShopConfig, now = new Date()): number {
  const firings = CronExpressionParser.parse(shop.schedule, { currentDate: now });
  const first = firings.next().getTime();
  const second = firings.next().getTime();
  return (MISSED_RUNS_BEFORE_OVERDUE * (second - first)) / 1000;
}
