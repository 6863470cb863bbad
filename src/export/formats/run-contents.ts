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
    changes:
      previousRun === null ? [] : readOnceIfFew(() => diffRuns(store, previousRun, run.run), KEPT_CHANGES),
  };
}

/**
 * The feeds read a run's changes twice (`snapshot.sqlite`'s table, then `changes.csv`): up to this
 * many, the first complete reading is kept for the second (a 1 % resync of 100,000 items: 1,000
 * changes, ~50 ms of CPU saved; a few MiB at most), more are read from the store again.
 */
const KEPT_CHANGES = 5_000;

/** `read()`'s values, each time iterated; kept from a complete first reading of at most `most` of them. */
function readOnceIfFew<T>(read: () => IterableIterator<T>, most: number): Iterable<T> {
  let kept: readonly T[] | undefined;
  return {
    *[Symbol.iterator]() {
      if (kept !== undefined) return yield* kept;
      const seen: T[] = [];
      for (const value of read()) {
        if (seen.length <= most) seen.push(value);
        yield value;
      }
      if (seen.length <= most) kept = seen;
    },
  };
}
