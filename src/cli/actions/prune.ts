import { fromSqlite } from '../../store/open.js';
import { pruneRuns } from '../../store/prune-runs.js';
import { commandContext } from '../context.js';
import { type CliIO, writeLine } from '../io.js';
import { noStoreNote, openExistingStore, readableShop } from './shop-store.js';

export interface PruneFlags {
  shop?: string;
  keep: number;
}

/** `prune`: deletes the runs beyond the latest `keep` complete ones. */
export function pruneAction(io: CliIO, flags: PruneFlags): void {
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
}
