import type { Change } from '../../domain/change.js';
import { diffRuns } from '../../store/diff-runs.js';
import type { Store } from '../../store/open.js';
import { previousCompleteRun, type RunSummary } from '../../store/run-records.js';

/** What the feeds of one complete run hold beside its items (which SQLite reads itself). */
export interface RunContents {
  readonly shop: string;
  readonly run: RunSummary;
  /**
   * The complete run the changes are counted from: the previous complete run, or for the feeds the
   * run the previously published feeds reflect. Null for a shop's first run (no changes).
   */
  readonly previousRun: number | null;
  readonly changes: Iterable<Change>;
}

/**
 * The change list opens its SQLite statement only when iterated: a statement that is open keeps the
 * connection busy, so it must start when it is read, not when it is described.
 */
export function runContents(
  store: Store,
  shop: string,
  run: RunSummary,
  previousRun: number | null = previousCompleteRun(store, run.run),
): RunContents {
  return {
    shop,
    run,
    previousRun,
    changes: {
      [Symbol.iterator]: () =>
        previousRun === null ? [][Symbol.iterator]() : diffRuns(store, previousRun, run.run),
    },
  };
}
