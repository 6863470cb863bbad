import { Command } from 'commander';
import type { SyncFlags } from '../actions/sync.js';
import { shopOptions } from '../each-shop.js';
import type { CliIO } from '../io.js';
import { perPage } from './option-parsers.js';

export function syncCommand(io: CliIO): Command {
  const command = new Command('sync').description(
    'Run one complete sync of a shop now, in this process, then write its feeds.',
  );
  for (const option of shopOptions()) command.addOption(option);
  return (
    command
      .option(
        '--per-page <n>',
        'page size to ask the marketplace for, 1 to 1000 (default: SYNC_PER_PAGE)',
        perPage,
      )
      .option(
        '--accept-removals',
        'complete this run whatever it removes, even more than SYNC_MAX_REMOVED allows (the removals are real)',
      )
      .option('--json', 'print the summary as one JSON object (with --all: one a line)')
      // The sync itself is loaded when it runs: `--help` and the other commands do not compile it.
      .action(async (flags: SyncFlags) => (await import('../actions/sync.js')).syncAction(io, flags))
  );
}
