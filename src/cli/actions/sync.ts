import { readSecret, type ShopConfig } from '../../config/app-config.js';
import { DeliveryError, RemovalsHeldError } from '../../errors.js';
import { CLI_RETRY, deliverWithin } from '../../notify/deliver.js';
import { notificationOf } from '../../notify/payload.js';
import {
  failedJson,
  heldError,
  type RunEnded,
  runSync,
  SharedPools,
  type SyncSummary,
  summaryJson,
} from '../../sync/index.js';
import { type CommandContext, commandContext } from '../context.js';
import { forEachShop, type ShopChoice } from '../each-shop.js';
import { type CliIO, writeLine } from '../io.js';
import { ProgressLine } from '../progress.js';

export interface SyncFlags extends ShopChoice {
  perPage?: number;
  acceptRemovals?: boolean;
  json?: boolean;
}

/**
 * `sync`: one complete sync of each chosen shop, its summary printed as it ends. A held run's summary is
 * printed too, and then fails the shop: its feeds were not replaced. The shops' syncs, one after
 * another, share the command's connections to the marketplace.
 */
export async function syncAction(io: CliIO, flags: SyncFlags): Promise<void> {
  const context = commandContext(io);
  // Read before any sync: a notification secret that cannot be read is a setting to fix first.
  const secret = context.config.notifySecret ? readSecret(context.config.notifySecret) : undefined;
  const pools = new SharedPools(1);
  try {
    await forEachShop(
      context.config,
      flags,
      async (configured) => {
        const shop = flags.perPage === undefined ? configured : { ...configured, perPage: flags.perPage };
        const summary = await syncOne(shop, { context, io, pools }, secret, flags.acceptRemovals === true);
        writeLine(io.stdout, flags.json ? JSON.stringify(summaryJson(summary)) : summaryText(summary));
        if (summary.status === 'held') throw heldError(summary);
      },
      (shop, error) => {
        if (error instanceof RemovalsHeldError) {
          writeLine(io.stderr, `shop-sync: ${error.message}`);
          return;
        }
        if (flags.json) writeLine(io.stdout, JSON.stringify(failedJson(shop.name, error)));
        writeLine(io.stderr, `shop-sync: Shop ${shop.name} failed: ${error.message}`);
      },
    );
  } finally {
    await pools.close();
  }
}

/** What every sync of the command shares. */
interface SyncRunner {
  readonly context: CommandContext;
  readonly io: CliIO;
  readonly pools: SharedPools;
}

/** One sync with a progress line on a terminal (nothing of it otherwise). */
async function syncOne(
  shop: ShopConfig,
  { context, io, pools }: SyncRunner,
  secret: string | undefined,
  acceptRemovals: boolean,
): Promise<SyncSummary> {
  const progress = io.stderr.isTTY ? new ProgressLine(context.status, `Syncing ${shop.name}`) : undefined;
  try {
    return await runSync(shop, {
      config: context.config,
      log: context.log,
      signal: io.signal,
      onProgress: progress?.update,
      pools,
      acceptRemovals,
      onRun: shop.notifyUrl === undefined ? undefined : notifier(shop.notifyUrl, secret, context, io),
    });
  } finally {
    progress?.clear();
  }
}

/**
 * Delivers the run's notification before the command ends, retrying for CLI_RETRY's 30 s; a receiver
 * that never takes it costs a warning on stderr, never the sync's result or exit status.
 */
function notifier(
  url: string,
  secret: string | undefined,
  context: CommandContext,
  io: CliIO,
): (ended: RunEnded) => Promise<void> {
  return async (ended) => {
    const notification = notificationOf(ended);
    const log = context.log.child({ shop: notification.shop, delivery: notification.delivery });
    try {
      await deliverWithin(url, notification, secret, {
        ...CLI_RETRY,
        signal: io.signal,
        onRetry: (error, waitMs) =>
          log.info({ reason: error.message, retry_in_ms: waitMs }, 'notification not taken yet'),
      });
      log.info('notification delivered');
    } catch (error) {
      if (!(error instanceof DeliveryError)) throw error;
      writeLine(
        io.stderr,
        `shop-sync: Warning: ${error.message} Gave up on notification ${notification.delivery} after ${CLI_RETRY.budgetMs / 1000} s; the sync's result stands.`,
      );
    }
  };
}

export function summaryText(s: SyncSummary): string {
  if (s.status === 'held') {
    return [
      `Shop ${s.shop}: run ${s.run} held in ${(s.duration_ms / 1000).toFixed(1)} s: ${s.held}.`,
      `${s.items} items from ${s.pages} pages; completing it would have added ${s.added}, updated ${s.updated} and removed ${s.removed}.`,
    ].join('\n');
  }
  const invalid = s.invalid > 0 ? `, ${s.invalid} invalid items skipped` : '';
  return [
    `Shop ${s.shop}: run ${s.run} complete in ${(s.duration_ms / 1000).toFixed(1)} s.`,
    `${s.items} items from ${s.pages} pages: ${s.added} added, ${s.updated} updated, ${s.removed} removed${invalid}.`,
  ].join('\n');
}
