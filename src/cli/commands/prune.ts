import { Command } from 'commander';
import type { PruneFlags } from '../actions/prune.js';
import type { CliIO } from '../io.js';
import { positiveInteger } from './option-parsers.js';

export function pruneCommand(io: CliIO): Command {
  return (
    new Command('prune')
      .description(
        'Delete old runs, keeping the latest N complete runs and everything their snapshots and diffs need.',
      )
      .requiredOption('--keep <n>', 'complete runs to keep', positiveInteger)
      .option('--shop <name>', 'the shop (default: the configured one)')
      // What it does is loaded when it runs: `--help` and the other commands do not compile it.
      .action(async (flags: PruneFlags) => (await import('../actions/prune.js')).pruneAction(io, flags))
  );
}
