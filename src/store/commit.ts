import type { Store } from './open.js';
import type { RunCounts } from './run-records.js';

/**
 * Makes a run the latest complete snapshot (type-2 versioning). While reading, the run opened its new
 * and changed versions and closed the ones they supersede; confirming removals closed those of items
 * gone. All of that is invisible until the run is complete: the commit only counts and flips the
 * run's status, a transaction of a few index counts whatever the shop's size. The run's `run_matched`
 * rows are garbage from then on (`discardRunData` removes them in slices). `guard` runs first inside
 * the transaction (lease check).
 */
export function commitRun(store: Store, run: number, guard: () => void, now = new Date()): RunCounts {
  const { db } = store;
  return db
    .transaction((): RunCounts => {
      guard();
      const result = tallyRun(store, run);
      db.prepare(
        `UPDATE runs SET status = 'complete', finished_at = @now, heartbeat_at = @now, error = NULL,
           items = @items, added = @added, updated = @updated, removed = @removed, invalid = @invalid
         WHERE run = @run`,
      ).run({ ...result, run, now: now.toISOString() });
      return result;
    })
    .immediate();
}

/**
 * What completing `run` would make of the snapshot: its size and what it adds, updates and removes,
 * counted from the versions it opened and closed. Refuses while another unfinished run's versions are
 * there (they would be counted, and made visible).
 */
export function tallyRun(store: Store, run: number): RunCounts {
  assertNoUnfinishedData(store, run);
  const tallies = store.db
    .prepare(
      // The snapshot's size: items read, plus any kept at their last version because they were invalid now.
      `SELECT (SELECT pages FROM runs WHERE run = @run) AS pages,
              (SELECT count(*) FROM item_versions WHERE valid_to_run IS NULL) AS items,
              (SELECT count(*) FROM item_versions WHERE valid_from_run = @run) AS opened,
              (SELECT count(*) FROM item_versions WHERE valid_to_run = @run) AS closed,
              (SELECT count(*) FROM item_versions c WHERE c.valid_to_run = @run AND EXISTS
                 (SELECT 1 FROM item_versions o WHERE o.id = c.id AND o.valid_from_run = @run)) AS updated,
              -- Each invalid id once; an item without a readable id once, unless an item found
              -- invalid at its own URL (page 0) while confirming removals may be that one.
              (SELECT count(DISTINCT id) FROM invalid_items WHERE run = @run)
                + max(0, (SELECT count(*) FROM invalid_items WHERE run = @run AND id IS NULL)
                         - (SELECT count(*) FROM invalid_items WHERE run = @run AND page = 0)) AS invalid`,
    )
    .get({ run }) as Record<'pages' | 'items' | 'opened' | 'closed' | 'updated' | 'invalid', number>;
  return {
    pages: tallies.pages,
    items: tallies.items,
    added: tallies.opened - tallies.updated,
    updated: tallies.updated,
    removed: tallies.closed - tallies.updated,
    invalid: tallies.invalid,
  };
}

/**
 * What an unfinished run wrote must be discarded (`discardUnfinishedRuns`) before another run
 * completes, or this commit would make it visible: refuse rather than publish it.
 */
function assertNoUnfinishedData(store: Store, run: number): void {
  const left = store.db
    .prepare(
      `SELECT run FROM runs r WHERE r.status <> 'complete' AND r.run <> @run
         AND (EXISTS (SELECT 1 FROM item_versions WHERE valid_from_run = r.run)
              OR EXISTS (SELECT 1 FROM item_versions WHERE valid_to_run = r.run)) LIMIT 1`,
    )
    .pluck()
    .get({ run }) as number | undefined;
  if (left !== undefined)
    throw new Error(
      `run ${left} is unfinished and its versions are not discarded; run ${run} cannot complete`,
    );
}
