import type Database from 'better-sqlite3';
import type { InvalidItem, Item } from '../domain/item.js';
import { ITEM_COLUMNS, itemHash, itemValues, rowToItem, type SqlValue } from './item-row.js';
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
        fresh += insertItems(statements, run, page.page, page.items);
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
    stagePages(this.store, this.run, pages, this.guard);
  }
}

/** Stages items found still present while confirming removals; they are part of the run like any other. */
export function stageConfirmed(store: Store, run: number, items: readonly Item[]): void {
  const statements = stagingStatements(store.db);
  store.db
    .transaction(() => {
      const fresh = insertItems(statements, run, CONFIRMED_PAGE, items);
      statements.countConfirmed.run(fresh, run);
    })
    .immediate();
}

/**
 * Inserts or refreshes staged rows; returns how many ids were new to the run. An item whose values
 * hash as its open version's is staged compact (id, page and hash only): the commit has nothing to
 * copy from it, and most items of a steady shop are such items.
 */
function insertItems(
  statements: StagingStatements,
  run: number,
  page: number,
  items: readonly Item[],
): number {
  let fresh = 0;
  for (const item of items) {
    const hash = itemHash(item);
    const inserted =
      statements.currentHash.get(item.id) === hash
        ? stageCompact(statements, run, page, item.id, hash)
        : stageFull(statements, run, page, itemValues(item, hash));
    if (inserted) fresh += 1;
  }
  return fresh;
}

function stageCompact(s: StagingStatements, run: number, page: number, id: string, hash: string): boolean {
  if (s.insertCompact.run(run, page, id, hash).changes === 1) return true;
  s.refreshCompact.run(page, hash, run, id);
  return false;
}

function stageFull(s: StagingStatements, run: number, page: number, values: SqlValue[]): boolean {
  if (s.insertFull.run(run, page, ...values).changes === 1) return true;
  s.refreshFull.run(page, ...values.slice(1), run, values[0]);
  return false;
}

interface StagingStatements {
  readonly currentHash: Database.Statement<[string], string>;
  readonly insertCompact: Database.Statement;
  readonly refreshCompact: Database.Statement;
  readonly insertFull: Database.Statement;
  readonly refreshFull: Database.Statement;
  readonly addInvalid: Database.Statement;
  readonly checkpoint: Database.Statement;
  readonly countConfirmed: Database.Statement;
}

/** Prepared once per connection: a page is staged with the same few statements every time. */
const prepared = new WeakMap<Database.Database, StagingStatements>();

function stagingStatements(db: Database.Database): StagingStatements {
  const known = prepared.get(db);
  if (known) return known;
  const valueColumns = ITEM_COLUMNS.filter((c) => c !== 'id');
  const statements: StagingStatements = {
    currentHash: db
      .prepare<[string], string>('SELECT hash FROM item_versions WHERE id = ? AND valid_to_run IS NULL')
      .pluck(),
    insertCompact: db.prepare('INSERT OR IGNORE INTO staged_items (run, page, id, hash) VALUES (?, ?, ?, ?)'),
    refreshCompact: db.prepare(
      `UPDATE staged_items SET page = ?, hash = ?, ${valueColumns
        .filter((c) => c !== 'hash')
        .map((c) => `${c} = NULL`)
        .join(', ')} WHERE run = ? AND id = ?`,
    ),
    insertFull: db.prepare(
      `INSERT OR IGNORE INTO staged_items (run, page, ${ITEM_COLUMNS.join(', ')})
         VALUES (?, ?, ${ITEM_COLUMNS.map(() => '?').join(', ')})`,
    ),
    refreshFull: db.prepare(
      `UPDATE staged_items SET page = ?, ${valueColumns.map((c) => `${c} = ?`).join(', ')}
         WHERE run = ? AND id = ?`,
    ),
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

/**
 * Items of the latest complete snapshot that this run has not staged (nor seen as invalid): the
 * candidates for removal, to be confirmed one by one before anything is retired.
 */
export function unstagedCurrentItems(store: Store, run: number): Item[] {
  const rows = store.db
    .prepare(
      `SELECT ${ITEM_COLUMNS.join(', ')} FROM item_versions v
        WHERE v.valid_to_run IS NULL
          AND NOT EXISTS (SELECT 1 FROM staged_items s WHERE s.run = ? AND s.id = v.id)
          AND NOT EXISTS (SELECT 1 FROM invalid_items i WHERE i.run = ? AND i.id = v.id)
        ORDER BY v.id`,
    )
    .raw()
    .all(run, run) as unknown[][];
  return rows.map(rowToItem);
}
