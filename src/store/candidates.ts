import { setImmediate } from 'node:timers/promises';
import type { Item } from '../domain/item.js';
import { ITEM_COLUMNS, rowToItem } from './item-row.js';
import type { Store } from './open.js';

/** Open versions of complete runs that `run` has neither matched nor seen as invalid: removal candidates. */
const CANDIDATES = `FROM item_versions v
  WHERE v.valid_to_run IS NULL AND v.valid_from_run < @run
    AND NOT EXISTS (SELECT 1 FROM run_matched m WHERE m.run = @run AND m.version = v.version)
    AND NOT EXISTS (SELECT 1 FROM invalid_items i WHERE i.run = @run AND i.id = v.id)`;

/**
 * How many removal candidates `run` has, from counts of index ranges rather than a scan: the open
 * versions of complete runs, less those the run matched (`run_matched` holds only such versions, each
 * once: see `writeItems`), less those of ids it found invalid (few: that term starts from them).
 */
export function candidateCount(store: Store, run: number): number {
  return store.db
    .prepare(
      `SELECT (SELECT count(*) FROM item_versions INDEXED BY item_versions_to WHERE valid_to_run IS NULL)
            - (SELECT count(*) FROM item_versions INDEXED BY item_versions_from
                WHERE valid_from_run >= @run AND valid_to_run IS NULL)
            - (SELECT count(*) FROM run_matched WHERE run = @run)
            - (SELECT count(*) FROM (SELECT DISTINCT id FROM invalid_items WHERE run = @run) i
                CROSS JOIN item_versions v INDEXED BY item_versions_id
                WHERE v.id = i.id AND v.valid_to_run IS NULL AND v.valid_from_run < @run
                  AND NOT EXISTS (SELECT 1 FROM run_matched m WHERE m.run = @run AND m.version = v.version))`,
    )
    .pluck()
    .get({ run }) as number;
}

/** Open versions per slice of a scan: one slice is one short synchronous stretch. */
const SLICE = 2000;

/**
 * Calls `visit` with the removal candidates of `run` among each slice of open versions, in the order
 * they were written, yielding to the event loop between slices: no statement scans the whole shop at
 * once. When the counts say there are none, there is no scan at all.
 */
export async function forEachCandidateSlice(
  store: Store,
  run: number,
  visit: (candidates: Item[]) => void,
): Promise<void> {
  if (candidateCount(store, run) === 0) return;
  const sliceEnd = store.db
    .prepare(
      `SELECT max(version) FROM (SELECT version FROM item_versions INDEXED BY item_versions_to
        WHERE valid_to_run IS NULL AND version > @after ORDER BY version LIMIT ${SLICE})`,
    )
    .pluck();
  const inSlice = store.db
    .prepare(
      `SELECT ${ITEM_COLUMNS.map((c) => `v.${c}`).join(', ')} ${CANDIDATES}
          AND v.version > @after AND v.version <= @last ORDER BY v.version`,
    )
    .raw();
  let after = 0;
  for (;;) {
    const last = sliceEnd.get({ after }) as number | null;
    if (last === null) return;
    visit((inSlice.all({ run, after, last }) as unknown[][]).map(rowToItem));
    after = last;
    await setImmediate();
  }
}

/** Whether `id` is still a removal candidate of `run`. */
export function isRemovalCandidate(store: Store, run: number, id: string): boolean {
  return store.db.prepare(`SELECT 1 ${CANDIDATES} AND v.id = @id`).pluck().get({ run, id }) === 1;
}

/**
 * Closes the versions of every remaining removal candidate at `run` (confirmed gone), slice by slice;
 * like the run's other writes, readers see it only once the run is complete. Returns how many.
 */
export async function closeRemoved(store: Store, run: number): Promise<number> {
  const close = store.db.prepare(
    'UPDATE item_versions SET valid_to_run = @run WHERE id = @id AND valid_to_run IS NULL AND valid_from_run < @run',
  );
  let closed = 0;
  await forEachCandidateSlice(store, run, (gone) => {
    store.db.transaction(() => {
      for (const item of gone) closed += close.run({ run, id: item.id }).changes;
    })();
  });
  return closed;
}

/** How many items of the run's listing had no readable id. */
export function unreadableIds(store: Store, run: number): number {
  return store.db
    .prepare('SELECT count(*) FROM invalid_items WHERE run = ? AND id IS NULL')
    .pluck()
    .get(run) as number;
}

/**
 * Keeps every remaining removal candidate but those in `gone` at its last version, as if the run had
 * read it unchanged (the next run settles it). Returns how many.
 */
export async function keepCandidates(store: Store, run: number, gone: ReadonlySet<string>): Promise<number> {
  const keep = store.db.prepare(
    `INSERT OR IGNORE INTO run_matched (run, version)
       SELECT @run, version FROM item_versions WHERE id = @id AND valid_to_run IS NULL AND valid_from_run < @run`,
  );
  let kept = 0;
  // A slice's rows only mark versions of that slice: the scan's later slices are not affected.
  await forEachCandidateSlice(store, run, (candidates) => {
    store.db.transaction(() => {
      for (const item of candidates) if (!gone.has(item.id)) kept += keep.run({ run, id: item.id }).changes;
    })();
  });
  return kept;
}
