import { setImmediate } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import type { InvalidItem, Item } from '../domain/item.js';
import { ITEM_COLUMNS, itemHash, itemValues, rowToItem } from './item-row.js';
import type { Store } from './open.js';

/** One page as the reader delivered it. */
export interface StagedPage {
  readonly page: number;
  readonly items: readonly Item[];
  readonly invalid: readonly InvalidItem[];
}

/** Page number recorded for items staged by confirming a removal rather than by reading a page. */
export const CONFIRMED_PAGE = 0;

/**
 * Stages pages read in a row and moves the run's checkpoint to the last of them in one transaction, so
 * that a resumed run never skips or half-stages a page. An id already staged in this run keeps counting
 * once, with the values read last. `guard` runs inside the transaction (the caller checks it still holds
 * the lease).
 */
export function stagePages(
  store: Store,
  run: number,
  pages: readonly StagedPage[],
  guard: () => void,
  now = new Date(),
): void {
  const last = pages.at(-1);
  if (last === undefined) return;
  const statements = stagingStatements(store.db);
  store.db
    .transaction(() => {
      guard();
      let fresh = 0;
      let invalid = 0;
      for (const page of pages) {
        fresh += writeItems(statements, run, page.items);
        for (const bad of page.invalid) statements.addInvalid.run(run, page.page, bad.id, bad.reason);
        invalid += page.invalid.length;
      }
      statements.checkpoint.run(last.page, pages.length, fresh, invalid, now.toISOString(), run);
    })
    .immediate();
}

/** When a batch of read pages is staged: once it holds `pages` pages or `ms` have passed since the last. */
export interface BatchLimits {
  readonly pages: number;
  readonly ms: number;
}

/**
 * Pages read but not yet staged. Staging several pages per transaction spares writing the same index
 * pages to the WAL once per page; pages still pending when a process dies are simply read again.
 */
export class StagingBatch {
  private pending: StagedPage[] = [];
  private flushedAt: number;

  constructor(
    private readonly store: Store,
    private readonly run: number,
    private readonly guard: () => void,
    private readonly limits: BatchLimits,
    /** Called once a batch is stored (the fault suite kills the process there). */
    private readonly onStaged: () => void = () => undefined,
  ) {
    this.flushedAt = Date.now();
  }

  /** Adds a page, staging the batch when it is full or due. */
  add(page: StagedPage): void {
    this.pending.push(page);
    const due = Date.now() - this.flushedAt >= this.limits.ms;
    if (due || this.pending.length >= this.limits.pages) this.flush();
  }

  /** Stages every pending page. They leave the batch first: a failed flush is not repeated, resume reads them again. */
  flush(): void {
    const pages = this.pending;
    this.pending = [];
    this.flushedAt = Date.now();
    if (pages.length === 0) return;
    stagePages(this.store, this.run, pages, this.guard);
    this.onStaged();
  }
}

/** Writes items found still present while confirming removals; they are part of the run like any other. */
export function stageConfirmed(store: Store, run: number, items: readonly Item[]): void {
  if (items.length === 0) return;
  const statements = stagingStatements(store.db);
  store.db
    .transaction(() => {
      const fresh = writeItems(statements, run, items);
      statements.countConfirmed.run(fresh, run);
    })
    .immediate();
}

/**
 * Writes what the run read; returns how many ids were new to the run. Every id read is noted in
 * `run_seen` (an id read twice counts once). An item whose values hash as its current version's writes
 * nothing more. A new or changed one writes its version, opened by this run, and closes the version
 * it supersedes at this run: readers of complete runs see neither change until the run is complete
 * (see `VALID_AT`). Read again within the run, the values read last win: the run's version is
 * replaced, or dropped and the previous one reopened when the item is back to it.
 */
function writeItems(s: StagingStatements, run: number, items: readonly Item[]): number {
  let fresh = 0;
  for (const item of items) {
    const hash = itemHash(item);
    const first = s.markSeen.run(run, item.id).changes === 1;
    if (first) fresh += 1;
    const written = first ? undefined : s.runVersionHash.get(item.id, run);
    if (written === hash) continue;
    const current = s.currentVersion.get(item.id, run, run);
    if (current?.[0] === hash) {
      if (current[1] === run) s.reopen.run(item.id, run);
      if (written !== undefined) s.dropRunVersion.run(item.id, run);
      continue;
    }
    if (current?.[1] === null) s.close.run(run, item.id, run);
    if (written !== undefined) s.replaceRunVersion.run(...itemValues(item, hash).slice(1), item.id, run);
    else s.insertVersion.run(run, ...itemValues(item, hash));
  }
  return fresh;
}

interface StagingStatements {
  readonly markSeen: Database.Statement;
  /** [hash, valid_to_run] of the item's version current at the latest complete run (or closed by this run). */
  readonly currentVersion: Database.Statement<[string, number, number], [string, number | null]>;
  readonly runVersionHash: Database.Statement<[string, number], string>;
  readonly insertVersion: Database.Statement;
  readonly replaceRunVersion: Database.Statement;
  readonly dropRunVersion: Database.Statement;
  readonly close: Database.Statement;
  readonly reopen: Database.Statement;
  readonly addInvalid: Database.Statement;
  readonly checkpoint: Database.Statement;
  readonly countConfirmed: Database.Statement;
}

/** Prepared once per connection: a page is written with the same few statements every time. */
const prepared = new WeakMap<Database.Database, StagingStatements>();

function stagingStatements(db: Database.Database): StagingStatements {
  const known = prepared.get(db);
  if (known) return known;
  const valueColumns = ITEM_COLUMNS.filter((c) => c !== 'id');
  const statements: StagingStatements = {
    markSeen: db.prepare('INSERT OR IGNORE INTO run_seen (run, id) VALUES (?, ?)'),
    currentVersion: db
      .prepare<[string, number, number], [string, number | null]>(
        `SELECT hash, valid_to_run FROM item_versions WHERE id = ? AND valid_from_run < ?
           AND (valid_to_run IS NULL OR valid_to_run = ?)`,
      )
      .raw(),
    runVersionHash: db
      .prepare<[string, number], string>('SELECT hash FROM item_versions WHERE id = ? AND valid_from_run = ?')
      .pluck(),
    insertVersion: db.prepare(
      `INSERT INTO item_versions (valid_from_run, ${ITEM_COLUMNS.join(', ')})
         VALUES (?, ${ITEM_COLUMNS.map(() => '?').join(', ')})`,
    ),
    replaceRunVersion: db.prepare(
      `UPDATE item_versions SET ${valueColumns.map((c) => `${c} = ?`).join(', ')}
         WHERE id = ? AND valid_from_run = ?`,
    ),
    dropRunVersion: db.prepare('DELETE FROM item_versions WHERE id = ? AND valid_from_run = ?'),
    close: db.prepare(
      'UPDATE item_versions SET valid_to_run = ? WHERE id = ? AND valid_to_run IS NULL AND valid_from_run < ?',
    ),
    reopen: db.prepare('UPDATE item_versions SET valid_to_run = NULL WHERE id = ? AND valid_to_run = ?'),
    addInvalid: db.prepare('INSERT INTO invalid_items (run, page, id, reason) VALUES (?, ?, ?, ?)'),
    checkpoint: db.prepare(
      `UPDATE runs SET checkpoint_page = ?, pages = pages + ?, items = items + ?, invalid = invalid + ?,
         heartbeat_at = ? WHERE run = ?`,
    ),
    countConfirmed: db.prepare('UPDATE runs SET items = items + ? WHERE run = ?'),
  };
  prepared.set(db, statements);
  return statements;
}

/** Open versions of complete runs that `run` has neither read nor seen as invalid: removal candidates. */
const CANDIDATES = `FROM item_versions v INDEXED BY item_versions_open
  WHERE v.valid_to_run IS NULL AND v.valid_from_run < @run
    AND NOT EXISTS (SELECT 1 FROM run_seen s WHERE s.run = @run AND s.id = v.id)
    AND NOT EXISTS (SELECT 1 FROM invalid_items i WHERE i.run = @run AND i.id = v.id)`;

/** Open versions per slice of a scan: one slice is one short synchronous stretch. */
const SLICE = 2000;

/**
 * Calls `visit` with the removal candidates of `run` among each slice of open versions, in id order,
 * yielding to the event loop between slices: no statement scans the whole shop at once.
 */
export async function forEachCandidateSlice(
  store: Store,
  run: number,
  visit: (candidates: Item[]) => void,
): Promise<void> {
  const sliceEnd = store.db
    .prepare(
      `SELECT max(id) FROM (SELECT id FROM item_versions INDEXED BY item_versions_open
        WHERE valid_to_run IS NULL AND id > @after ORDER BY id LIMIT ${SLICE})`,
    )
    .pluck();
  const inSlice = store.db
    .prepare(
      `SELECT ${ITEM_COLUMNS.map((c) => `v.${c}`).join(', ')} ${CANDIDATES}
          AND v.id > @after AND v.id <= @last ORDER BY v.id`,
    )
    .raw();
  let after = '';
  for (;;) {
    const last = sliceEnd.get({ after }) as string | null;
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
