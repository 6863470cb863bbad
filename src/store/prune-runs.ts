import { UsageError } from '../errors.js';
import type { Store } from './open.js';
import { publishedRun } from './published.js';

export interface PruneResult {
  /** The runs deleted, oldest first. */
  runs: number[];
  /** Item versions deleted because no kept run can see them. */
  versions: number;
}

/**
 * Keeps the latest `keep` complete runs and everything they need. A version is needed by a kept run
 * when it was still current at the oldest kept run or opened after it, so versions closed at or
 * before that run go; failed runs older than it go with their staged and invalid items. The run the
 * published feeds reflect is always kept: the next feeds count their changes from it.
 */
export function pruneRuns(store: Store, keep: number): PruneResult {
  if (!Number.isInteger(keep) || keep < 1)
    throw new UsageError(`--keep must be a whole number of at least 1.`);
  const { db } = store;
  return db
    .transaction((): PruneResult => {
      const oldestByCount = db
        .prepare("SELECT run FROM runs WHERE status = 'complete' ORDER BY run DESC LIMIT 1 OFFSET ?")
        .pluck()
        .get(keep - 1) as number | undefined;
      if (oldestByCount === undefined) return { runs: [], versions: 0 };
      const oldestKept = Math.min(oldestByCount, publishedRun(store) ?? oldestByCount);
      const runs = db
        .prepare("SELECT run FROM runs WHERE run < ? AND status <> 'running' ORDER BY run")
        .pluck()
        .all(oldestKept) as number[];
      db.prepare("DELETE FROM runs WHERE run < ? AND status <> 'running'").run(oldestKept);
      const versions = db
        .prepare('DELETE FROM item_versions WHERE valid_to_run <= ?')
        .run(oldestKept).changes;
      return { runs, versions };
    })
    .immediate();
}
