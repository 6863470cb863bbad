import type Database from 'better-sqlite3';
import type { InvalidItem, Item } from '../domain/item.js';
import type { UnchangedItem } from '../domain/unchanged-item.js';
import { BulkLoad, finishBulkLoad } from './bulk-load.js';
import type { Store } from './open.js';
import { statementsPerConnection } from './per-connection.js';
import type { ReadBodies } from './read-bodies.js';
import { writeItems } from './write-items.js';

/** One page as the reader delivered it. */
export interface StagedPage {
  readonly page: number;
  readonly items: readonly Item[];
  readonly invalid: readonly InvalidItem[];
  /**
   * The listing reader's resume state after this page (JSON), if it keeps one: stored with the page in
   * the same transaction, handed back by `beginRun` when the run resumes.
   */
  readonly checkpoint?: string;
  /** Items sent as the very text their current version was read from: their values are that version's. */
  readonly unchanged?: readonly UnchangedItem[];
  /** The hash of each of `items`' text as sent, in the same order, when it was taken. */
  readonly sent?: readonly (number | undefined)[];
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
  { now = new Date(), bodies, bulk }: { now?: Date; bodies?: ReadBodies; bulk?: BulkLoad } = {},
): void {
  const last = pages.at(-1);
  if (last === undefined) return;
  const statements = stagingStatements(store.db);
  store.db
    .transaction(() => {
      guard();
      const fresh = bulk ? bulk.write(pages) : writeItems(store.db, run, pages);
      bodies?.write(run, bulk && { handed: bulk.versionOf });
      let invalid = 0;
      for (const page of pages) {
        for (const bad of page.invalid) statements.addInvalid.run(run, page.page, bad.id, bad.reason);
        invalid += page.invalid.length;
      }
      statements.checkpoint.run(
        last.page,
        last.checkpoint ?? null,
        pages.length,
        fresh,
        invalid,
        now.toISOString(),
        run,
      );
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
 * pages to the WAL once per page; pages still pending when a process dies are simply read again. A
 * store with no versions yet is bulk-loaded (`BulkLoad`): its first batch decides, `finish` ends it.
 */
export class StagingBatch {
  private pending: StagedPage[] = [];
  private flushedAt: number;
  /** Whether the batch has staged yet, and so decided between a bulk load and `writeItems`. */
  private bulk: BulkLoad | undefined | null = null;

  constructor(
    private readonly store: Store,
    private readonly run: number,
    private readonly guard: () => void,
    private readonly limits: BatchLimits,
    /** Called once a batch is stored (the fault suite kills the process there). */
    private readonly onStaged: () => void = () => undefined,
    /** The listing bodies the reading learns and uses, written with each batch. */
    private readonly bodies?: ReadBodies,
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
    const { db } = this.store;
    // Decided in the transaction of the first batch, and only once it commits.
    this.bulk = db
      .transaction(() => {
        const bulk = this.bulk === null ? BulkLoad.begin(db, this.run) : this.bulk;
        stagePages(this.store, this.run, pages, this.guard, { bodies: this.bodies, bulk });
        return bulk;
      })
      .immediate();
    this.onStaged();
  }

  /**
   * Stages every pending page once the listing is read, and ends a bulk load: the store is then
   * indexed as the removals' confirmation and the commit expect.
   */
  async finish(): Promise<void> {
    this.flush();
    if (this.bulk) await finishBulkLoad(this.store.db, this.run, this.guard);
  }
}

/** Writes items found still present while confirming removals; they are part of the run like any other. */
export function stageConfirmed(store: Store, run: number, items: readonly Item[]): void {
  if (items.length === 0) return;
  const statements = stagingStatements(store.db);
  store.db
    .transaction(() => {
      const fresh = writeItems(store.db, run, [{ items }]);
      statements.countConfirmed.run(fresh, run);
    })
    .immediate();
}

/**
 * Notes items whose own URL answered an item that cannot be read (while confirming removals) as invalid
 * in `run`, at page 0: they are there, so they keep their last version rather than being removed.
 */
export function stageInvalidAtUrl(
  store: Store,
  run: number,
  items: readonly { readonly id: string; readonly reason: string }[],
): void {
  if (items.length === 0) return;
  const statements = stagingStatements(store.db);
  store.db
    .transaction(() => {
      for (const item of items) statements.addInvalid.run(run, 0, item.id, item.reason);
    })
    .immediate();
}

interface StagingStatements {
  readonly addInvalid: Database.Statement;
  readonly checkpoint: Database.Statement;
  readonly countConfirmed: Database.Statement;
}

/** Prepared once per connection. */
const stagingStatements = statementsPerConnection<StagingStatements>({
  addInvalid: (db) => db.prepare('INSERT INTO invalid_items (run, page, id, reason) VALUES (?, ?, ?, ?)'),
  checkpoint: (db) =>
    db.prepare(
      `UPDATE runs SET checkpoint_page = ?, checkpoint = coalesce(?, checkpoint), pages = pages + ?, items = items + ?, invalid = invalid + ?,
         heartbeat_at = ? WHERE run = ?`,
    ),
  countConfirmed: (db) => db.prepare('UPDATE runs SET items = items + ? WHERE run = ?'),
});
