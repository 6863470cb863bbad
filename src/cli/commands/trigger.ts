import { Command } from 'commander';
import { ShopQueues } from '../../../jobs/queue.js';
import { SyncJobFailedError } from '../../../jobs/queue-errors.js';
import { connectRedis, displayRedisUrl } from '../../../jobs/redis.js';
import {
  asQueueError,
  type SyncResult,
  type Triggered,
  triggerSyncs,
  waitForSyncs,
} from '../../../jobs/trigger-syncs.js';
import { type AppConfig, findShop } from '../../config/app-config.js';
import { type ShopSyncError, UsageError } from '../../errors.js';
import { failedJson, heldError, summaryJson } from '../../sync/index.js';
import { summaryText } from '../actions/sync.js';
import { commandContext } from '../context.js';
import { type CliIO, writeLine } from '../io.js';
import { positiveSeconds } from './option-parsers.js';

interface TriggerFlags {
  shop?: string[];
  all?: boolean;
  wait?: boolean;
  timeout?: number;
  acceptRemovals?: boolean;
  json?: boolean;
}

export function triggerCommand(io: CliIO): Command {
  return new Command('trigger')
    .description(
      'Queue a sync of each shop named (or of every configured shop) for the worker; with --wait, wait and report like sync. The sync reported starts after the trigger.',
    )
    .option('--shop <name...>', 'the shops (default: the configured one); repeat or list several')
    .option('--all', 'every configured shop')
    .option('--wait', 'wait until the syncs have finished and print their summaries')
    .option('--timeout <seconds>', 'with --wait, give up waiting after this long (exit 1)', positiveSeconds)
    .option(
      '--accept-removals',
      'the queued sync completes whatever it removes, even more than SYNC_MAX_REMOVED allows',
    )
    .option('--json', 'print one JSON object per shop, one a line')
    .action(async (flags: TriggerFlags) => {
      const { config, log } = commandContext(io);
      const shops = chosenShops(config, flags);
      const redis = await connectRedis(config.redisUrl);
      const queues = new ShopQueues(redis, config.queuePrefix, log);
      try {
        const triggered = await triggerSyncs(queues, shops, { acceptRemovals: flags.acceptRemovals });
        if (!flags.wait) {
          for (const one of triggered)
            writeLine(io.stdout, flags.json ? JSON.stringify(one) : queuedNote(one));
          return;
        }
        for (const one of triggered) writeLine(io.stderr, `${queuedNote(one)} Waiting for it to finish.`);
        await report(queues, triggered, flags, io);
      } catch (error) {
        throw asQueueError(error, displayRedisUrl(config.redisUrl));
      } finally {
        await queues.close();
        await redis.quit();
      }
    });
}

async function report(
  queues: ShopQueues,
  triggered: readonly Triggered[],
  flags: TriggerFlags,
  io: CliIO,
): Promise<void> {
  // As `sync` reports: each summary (a held one too) as its sync ends; with several shops, each failure's
  // sentence as it comes (and with --json its object), then one that counts them; with one, its failure
  // is the command's.
  const several = triggered.length > 1;
  const print = (result: SyncResult) => {
    if ('summary' in result) {
      const { summary } = result;
      writeLine(io.stdout, flags.json ? JSON.stringify(summaryJson(summary)) : summaryText(summary));
    } else if (flags.json && several) {
      writeLine(io.stdout, JSON.stringify(failedJson(result.shop, result.error)));
    }
    const error = failureOf(result);
    if (error && several) writeLine(io.stderr, `shop-sync: ${error.message}`);
  };
  const results = await waitForSyncs(queues, triggered, {
    signal: io.signal,
    timeoutMs: flags.timeout === undefined ? undefined : flags.timeout * 1000,
    onResult: print,
  });
  const failed = results.flatMap((result) => {
    const error = failureOf(result);
    return error ? [{ shop: result.shop, error }] : [];
  });
  const [first] = failed;
  if (!first) return;
  if (results.length === 1) throw first.error;
  const shops = failed.map((result) => result.shop).join(', ');
  throw new SyncJobFailedError(
    `${failed.length} of ${results.length} syncs failed (shop ${shops}), as said above.`,
  );
}

/** Why a sync fails the command: its job failed, or its run was held (its summary printed first). */
function failureOf(result: SyncResult): ShopSyncError | undefined {
  if ('error' in result) return result.error;
  return result.summary.status === 'held' ? heldError(result.summary) : undefined;
}

function chosenShops(config: AppConfig, flags: TriggerFlags): string[] {
  if (flags.all && flags.shop) throw new UsageError('Use either --shop or --all, not both.');
  if (flags.all) return Object.keys(config.shops);
  const named = flags.shop ?? [undefined];
  return [...new Set(named.map((name) => findShop(config, name).name))];
}

function queuedNote(one: Triggered): string {
  return one.deduplicated
    ? `A sync of shop ${one.shop} that has not started yet is already queued (job ${one.job}); it runs next.`
    : `Queued a sync of shop ${one.shop} (job ${one.job}).`;
}
