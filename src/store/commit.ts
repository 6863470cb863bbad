import type { Store } from './open.js';
import type { RunCounts } from './runs.js';

/**
 * Makes a run the latest complete snapshot in one transaction (type-2 versioning). The run has already
 * written its new and changed versions while reading; the commit only closes the versions they
 * supersede and those of items confirmed gone (neither read nor reported invalid), then flips the
 * run's status, which makes its versions visible. The run's `run_seen` rows are garbage from then on
 * (`discardRunData` removes them in slices). `guard` runs first inside the transaction (lease check).
 */
export function commitRun(store: Store, run: number, guard: () => void, now = new Date()): RunCounts {
  const { db } = store;
  return db
    .transaction((): RunCounts => {
      guard();
      // Normally a no-op: versions of an unfinished run that will not resume were discarded when this
      // run began, but they must never become visible with this one.
      db.prepare(
        `DELETE FROM item_versions WHERE valid_from_run IN
           (SELECT run FROM runs WHERE status <> 'complete' AND run <> @run)`,
      ).run({ run });
      const removed = db
        .prepare(
          `UPDATE item_versions SET valid_to_run = @run
            WHERE valid_to_run IS NULL AND valid_from_run < @run
              AND NOT EXISTS (SELECT 1 FROM run_seen s WHERE s.run = @run AND s.id = item_versions.id)
              AND NOT EXISTS (SELECT 1 FROM invalid_items i WHERE i.run = @run AND i.id = item_versions.id)`,
        )
        .run({ run }).changes;
      const updated = db
        .prepare(
          `UPDATE item_versions SET valid_to_run = @run
            WHERE valid_to_run IS NULL AND valid_from_run < @run
              AND id IN (SELECT id FROM item_versions WHERE valid_from_run = @run)`,
        )
        .run({ run }).changes;
      const tallies = db
        .prepare(
          // The snapshot's size: items read, plus any kept at their last version because they were invalid now.
          `SELECT (SELECT pages FROM runs WHERE run = @run) AS pages,
                  (SELECT count(*) FROM item_versions WHERE valid_to_run IS NULL) AS items,
                  (SELECT count(*) FROM item_versions WHERE valid_from_run = @run) AS opened,
                  (SELECT count(*) FROM invalid_items WHERE run = @run) AS invalid`,
        )
        .get({ run }) as { pages: number; items: number; opened: number; invalid: number };
      const result: RunCounts = {
        pages: tallies.pages,
        items: tallies.items,
        added: tallies.opened - updated,
        updated,
        removed,
        invalid: tallies.invalid,
      };
      db.prepare(
        `UPDATE runs SET status = 'complete', finished_at = @now, heartbeat_at = @now, error = NULL,
           items = @items, added = @added, updated = @updated, removed = @removed, invalid = @invalid
         WHERE run = @run`,
      ).run({ ...result, run, now: now.toISOString() });
      return result;
    })
    .immediate();
}
