import type { Change } from '../domain/change.js';
import { type Item, TRACKED_FIELDS, type TrackedField } from '../domain/item.js';
import { UsageError } from '../errors.js';
import { ITEM_COLUMNS, itemAt, prefixedColumns } from './item-row.js';
import type { Store } from './open.js';
import { type CompleteRunMessages, requireCompleteRun } from './run-records.js';
import { VALID_AT } from './snapshot.js';

/**
 * The changes between two complete runs, by id, streamed. Only items with a version boundary between
 * the runs can differ, so the query starts from those and its cost follows the number of changes,
 * not the size of the shop. Items whose values are equal at both runs are no change, even if they
 * were removed and restored in between.
 */
export function diffRuns(
  store: Store,
  from: number,
  to: number,
  messages: CompleteRunMessages = comparedRunMessages(store),
): IterableIterator<Change> {
  requireCompleteRun(store, from, messages);
  requireCompleteRun(store, to, messages);
  if (from > to) {
    throw new UsageError(`--from run ${from} is later than --to run ${to}; give the older run as --from.`);
  }
  return changesBetween(store, from, to);
}

function* changesBetween(store: Store, from: number, to: number): IterableIterator<Change> {
  const rows = store.db
    .prepare(
      `WITH touched(id) AS (
         SELECT id FROM item_versions WHERE valid_from_run > @from AND valid_from_run <= @to
         UNION
         SELECT id FROM item_versions WHERE valid_to_run > @from AND valid_to_run <= @to)
       SELECT ${prefixedColumns('a')}, ${prefixedColumns('b')}
         FROM touched t
         LEFT JOIN item_versions a ON a.id = t.id AND ${VALID_AT('a', '@from')}
         LEFT JOIN item_versions b ON b.id = t.id AND ${VALID_AT('b', '@to')}
        WHERE a.hash IS NOT b.hash
        ORDER BY t.id`,
    )
    .raw()
    .iterate({ from, to }) as IterableIterator<unknown[]>;
  for (const row of rows) yield toChange(itemAt(row, 0), itemAt(row, ITEM_COLUMNS.length));
}

function toChange(before: Item | null, after: Item | null): Change {
  const current = (after ?? before) as Item;
  if (!before) return { change: 'added', id: current.id, title: current.title, fields: [], before, after };
  if (!after) return { change: 'removed', id: current.id, title: current.title, fields: [], before, after };
  return {
    change: 'updated',
    id: current.id,
    title: current.title,
    fields: changedFields(before, after),
    before,
    after,
  };
}

/** Tracked fields whose canonical values differ, in TRACKED_FIELDS order. */
export function changedFields(before: Item, after: Item): TrackedField[] {
  return TRACKED_FIELDS.filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
}

function comparedRunMessages(store: Store): CompleteRunMessages {
  return {
    missing: (run) => `Run ${run} does not exist in ${store.path}.`,
    incomplete: (run, status) => `Run ${run} is ${status}, not complete: only complete runs can be compared.`,
  };
}
