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
 * `run_seen` (an id read twice counts once). An item whose values hash as its open version's writes
 * nothing more; a new or changed one writes its version, opened by this run and invisible until the
 * run is complete. Read again within the run, the values read last win: the run's version is
 * replaced, or dropped when the item is back to its open version.
 */
function writeItems(s: StagingStatements, run: number, items: readonly Item[]): number {
  let fresh = 0;
  for (const item of items) {
    const hash = itemHash(item);
    const first = s.markSeen.run(run, item.id).changes === 1;
    if (first) fresh += 1;
    const written = first ? undefined : s.runVersionHash.get(item.id, run);
    if (written === hash) continue;
    if (s.openHash.get(item.id, run) === hash) {
      if (written !== undefined) s.dropRunVersion.run(item.id, run);
    } else if (written !== undefined) {
      s.replaceRunVersion.run(...itemValues(item, hash).slice(1), item.id, run);
    } else {
      s.insertVersion.run(run, ...itemValues(item, hash));
    }
  }
  return fresh;
}

interface StagingStatements {
  readonly markSeen: Database.Statement;
  readonly openHash: Database.Statement<[string, number], string>;
  readonly runVersionHash: Database.Statement<[string, number], string>;
  readonly insertVersion: Database.Statement;
  readonly replaceRunVersion: Database.Statement;
  readonly dropRunVersion: Database.Statement;
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
    openHash: db
      .prepare<[string, number], string>(
        'SELECT hash FROM item_versions WHERE id = ? AND valid_to_run IS NULL AND valid_from_run < ?',
      )
      .pluck(),
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
const CANDIDATES = `FROM item_versions v
  WHERE v.valid_to_run IS NULL AND v.valid_from_run < @run
    AND NOT EXISTS (SELECT 1 FROM run_seen s WHERE s.run = @run AND s.id = v.id)
    AND NOT EXISTS (SELECT 1 FROM invalid_items i WHERE i.run = @run AND i.id = v.id)`;

/** How many items of the latest complete snapshot this run has not read: candidates for removal. */
export function countRemovalCandidates(store: Store, run: number): number {
  return store.db.prepare(`SELECT count(*) ${CANDIDATES}`).pluck().get({ run }) as number;
}

/** At most `limit` removal candidates, by id: callers ask only for as many as they can afford to hold. */
export function removalCandidates(store: Store, run: number, limit: number): Item[] {
  const rows = store.db
    .prepare(
      `SELECT ${ITEM_COLUMNS.map((c) => `v.${c}`).join(', ')} ${CANDIDATES} ORDER BY v.id LIMIT @limit`,
    )
    .raw()
    .all({ run, limit }) as unknown[][];
  return rows.map(rowToItem);
}

/** Whether `id` is still a removal candidate of `run`. */
export function isRemovalCandidate(store: Store, run: number, id: string): boolean {
  return store.db.prepare(`SELECT 1 ${CANDIDATES} AND v.id = @id`).pluck().get({ run, id }) === 1;
}
