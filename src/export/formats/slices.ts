import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { lazily } from '../../store/per-connection.js';

/**
 * The feeds' SQLite work runs in slices with a turn of the event loop between them, so that one
 * shop's feeds never hold up the other shops, lease renewals or the page reader for more than a few
 * milliseconds, whatever the shop's size: SLICE rows for a statement that copies many at once, about
 * SLICE_MS of work for rows applied one by one.
 */
export const SLICE = 500;
const SLICE_MS = 10;

/**
 * A statement over the slice after key `@after` (`sql(true)`), or over the first slice while there is
 * no key yet (`sql(false)`): a lower bound that matched every key, '' say, would skip an empty one.
 * Each is prepared when first asked for: a small shop's feeds fit in the first slice.
 */
export function keyed(
  db: Database.Database,
  sql: (bounded: boolean) => string,
): (after: string | null) => Database.Statement {
  const first = lazily(() => db.prepare(sql(false)));
  const next = lazily(() => db.prepare(sql(true)));
  return (after) => (after === null ? first() : next());
}

/**
 * Runs `step` in a transaction per slice until it returns null, yielding between slices. `step` gets
 * the key its previous call returned (null at first) and returns the next slice's.
 */
export async function inSlices(
  db: Database.Database,
  step: (after: string | null) => string | null,
): Promise<void> {
  const slice = db.transaction(step);
  let after: string | null = null;
  for (;;) {
    after = slice(after);
    if (after === null) return;
    await nextTurn();
  }
}

/** Runs `apply` on each of `rows` in transactions of about SLICE_MS each, yielding between them. */
export async function inBatches<Row>(
  db: Database.Database,
  rows: Iterable<Row>,
  apply: (row: Row) => void,
): Promise<void> {
  const iterator = rows[Symbol.iterator]();
  const batch = db.transaction(() => {
    const until = performance.now() + SLICE_MS;
    do {
      const next = iterator.next();
      if (next.done) return false;
      apply(next.value);
    } while (performance.now() < until);
    return true;
  });
  try {
    while (batch()) await nextTurn();
  } finally {
    // Leaving early closes the iterator and with it the statement behind it.
    iterator.return?.();
  }
}

/** The condition that `key` is in the range `(@after, @last]`, or up to `@last` in the first range. */
export function inRange(key: string, bounded: boolean): string {
  return `${bounded ? `${key} > @after AND ` : ''}${key} <= @last`;
}

/**
 * Runs `step(after, last)` for consecutive ranges of SLICE keys, each in a transaction, yielding
 * between them: `keys(bounded)` selects them as column `key`, after `@after` when bounded.
 */
export async function inKeyRanges(
  db: Database.Database,
  keys: (bounded: boolean) => string,
  step: (after: string | null, last: string) => void,
): Promise<void> {
  const end = keyed(db, (bounded) => `SELECT max(key) FROM (${keys(bounded)} ORDER BY key LIMIT ${SLICE})`);
  await inSlices(db, (after) => {
    const last = end(after).pluck().get({ after }) as string | null;
    if (last !== null) step(after, last);
    return last;
  });
}

/**
 * The raw rows `sql(bounded)` selects, a slice at a time: each call of the returned function selects
 * the next slice in key order (after key `@after` when bounded), empty after the last; a row's key
 * is its value at `keyAt`.
 */
export function keyedSlices(
  db: Database.Database,
  sql: (bounded: boolean) => string,
  keyAt = 0,
): () => unknown[][] {
  const slice = keyed(db, sql);
  let after: string | null = null;
  let done = false;
  return () => {
    if (done) return [];
    const rows = slice(after).raw().all({ after }) as unknown[][];
    const last = rows.at(-1);
    if (last === undefined) done = true;
    else after = last[keyAt] as string;
    return rows;
  };
}
