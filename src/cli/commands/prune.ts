import { Command } from 'commander';
import { fromSqlite } from '../../store/open.js';
import { pruneRuns } from '../../store/prune-runs.js';
import { type CliIO, commandContext, writeLine } from '../io.js';
import { positiveInteger } from './option-parsers.js';
import { noStoreNote, openExistingStore, readableShop } from './shop-store.js';

interface PruneFlags {
  shop?: string;
  keep: number;
}

export function pruneCommand(io: CliIO): Command {
  return new Command('prune')
    .description(
      'Delete old runs, keeping the latest N complete runs and everything their snapshots and diffs need.',
    )
    .requiredOption('--keep <n>', 'complete runs to keep', positiveInteger)
    .option('--shop <name>', 'the shop (default: the configured one)')
    .action((flags: PruneFlags) => {
      const { config } = commandContext(io);
      const shop = readableShop(config, flags.shop);
      const store = openExistingStore(config, shop);
      if (!store) {
        writeLine(io.stdout, `Shop ${shop} has no runs yet (${noStoreNote(config)}): nothing to prune.`);
        return;
      }
      try {
        const result = pruneRuns(store, flags.keep);
        writeLine(
          io.stdout,
          result.runs.length === 0
            ? `Shop ${shop}: nothing to prune (at most ${flags.keep} complete runs).`
            : `Shop ${shop}: pruned runs ${result.runs.join(', ')} and ${result.versions} item versions only they needed.`,
        );
      } catch (error) {
        throw fromSqlite(`Cannot prune store ${store.path}`, store.path, error);
      } finally {
        store.close();
      }
    });
}
