import { Command } from 'commander';
import { findShop } from '../../config.js';
import { runSync, type SyncSummary } from '../../sync.js';
import { type CliIO, commandContext, writeLine } from '../io.js';
import { ProgressLine } from '../progress.js';
import { positiveInteger } from './options.js';

interface SyncFlags {
  shop?: string;
  perPage?: number;
  json?: boolean;
}

export function syncCommand(io: CliIO): Command {
  return new Command('sync')
    .description('Run one complete sync of a shop now, in this process, then write its feeds.')
    .option('--shop <name>', 'the shop (default: the configured one)')
    .option(
      '--per-page <n>',
      'page size to ask the marketplace for (default: SYNC_PER_PAGE)',
      positiveInteger,
    )
    .option('--json', 'print the summary as one JSON object')
    .action(async (flags: SyncFlags) => {
      const { config, log } = commandContext(io);
      const configured = findShop(config, flags.shop);
      const shop = flags.perPage === undefined ? configured : { ...configured, perPage: flags.perPage };
      const progress = io.stderr.isTTY ? new ProgressLine(io.stderr, `Syncing ${shop.name}`) : undefined;
      let summary: SyncSummary;
      try {
        summary = await runSync(shop, { config, log, signal: io.signal, onProgress: progress?.update });
      } finally {
        progress?.clear();
      }
      writeLine(io.stdout, flags.json ? JSON.stringify(summaryJson(summary)) : summaryText(summary));
    });
}

/** The contract's `sync --json` shape, keys in the documented order. */
export function summaryJson(s: SyncSummary): SyncSummary {
  return {
    shop: s.shop,
    run: s.run,
    status: s.status,
    pages: s.pages,
    items: s.items,
    added: s.added,
    updated: s.updated,
    removed: s.removed,
    invalid: s.invalid,
    duration_ms: s.duration_ms,
  };
}

export function summaryText(s: SyncSummary): string {
  const invalid = s.invalid > 0 ? `, ${s.invalid} invalid items skipped` : '';
  return [
    `Shop ${s.shop}: run ${s.run} complete in ${(s.duration_ms / 1000).toFixed(1)} s.`,
    `${s.items} items from ${s.pages} pages: ${s.added} added, ${s.updated} updated, ${s.removed} removed${invalid}.`,
  ].join('\n');
}
