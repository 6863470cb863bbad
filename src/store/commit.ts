import { ITEM_COLUMNS } from './item-row.js';
import type { Store } from './open.js';

export interface RunCounts {
  items: number;
  added: number;
  updated: number;
  removed: number;
  invalid: number;
}

/**
 * Makes a run the latest complete snapshot in one transaction (type-2 versioning): an unchanged item
 * writes nothing, a changed one closes its version and opens the next, an item neither staged nor
 * reported invalid is retired, a new or returning one opens a version. Unchanged items were staged
 * compact (no values, see `stagePages`): only the rows with values are compared and copied. The staged
 * rows have then served their purpose and are dropped. `guard` runs first inside the transaction (lease check).
 */
export function commitRun(store: Store, run: number, guard: () => void, now = new Date()): RunCounts {
  const { db } = store;
  return db
    .transaction((): RunCounts => {
      guard();
      const removed = db
        .prepare(
          `UPDATE item_versions SET valid_to_run = ? WHERE valid_to_run IS NULL
             AND NOT EXISTS (SELECT 1 FROM staged_items s WHERE s.run = ? AND s.id = item_versions.id)
             AND NOT EXISTS (SELECT 1 FROM invalid_items i WHERE i.run = ? AND i.id = item_versions.id)`,
        )
        .run(run, run, run).changes;
      const updated = db
        .prepare(
          // Driven by the staged rows that carry values (compact ones are unchanged by construction),
          // not by every open version.
          `UPDATE item_versions SET valid_to_run = ? WHERE rowid IN (
             SELECT v.rowid FROM staged_items s
               JOIN item_versions v ON v.id = s.id AND v.valid_to_run IS NULL
              WHERE s.run = ? AND s.raw IS NOT NULL AND s.hash <> v.hash)`,
        )
        .run(run, run).changes;
      const opened = db
        .prepare(
          `INSERT INTO item_versions (valid_from_run, valid_to_run, ${COPIED})
             SELECT ?, NULL, ${COPIED} FROM staged_items s
              WHERE s.run = ?
                AND NOT EXISTS (SELECT 1 FROM item_versions v WHERE v.id = s.id AND v.valid_to_run IS NULL)`,
        )
        .run(run, run).changes;
      const counts = db
        .prepare(
          // The snapshot's size: items read, plus any kept at their last version because they were invalid now.
          `SELECT (SELECT count(*) FROM item_versions WHERE valid_to_run IS NULL) AS items,
                  (SELECT count(*) FROM invalid_items WHERE run = @run) AS invalid`,
        )
        .get({ run }) as { items: number; invalid: number };
      const result = { ...counts, added: opened - updated, updated, removed };
      db.prepare(
        `UPDATE runs SET status = 'complete', finished_at = @now, heartbeat_at = @now, error = NULL,
           items = @items, added = @added, updated = @updated, removed = @removed, invalid = @invalid
         WHERE run = @run`,
      ).run({ ...result, run, now: now.toISOString() });
      db.prepare('DELETE FROM staged_items WHERE run = ?').run(run);
      return result;
    })
    .immediate();
}

const COPIED = ITEM_COLUMNS.join(', ');
