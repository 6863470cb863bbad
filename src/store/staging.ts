import type { InvalidItem, Item } from '../domain/item.js';
import { ITEM_COLUMNS, type ItemRow, itemToRow, rowToItem } from './item-row.js';
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
 * Stages one page and moves the run's checkpoint to it in one transaction, so that a resumed run
 * never skips or half-stages a page. An id already staged in this run keeps counting once, with the
 * values read last. `guard` runs inside the transaction (the caller checks it still holds the lease).
 */
export function stagePage(
  store: Store,
  run: number,
  page: StagedPage,
  guard: () => void,
  now = new Date(),
): void {
  const { db } = store;
  db.transaction(() => {
    guard();
    const fresh = insertItems(store, run, page.page, page.items);
    const addInvalid = db.prepare('INSERT INTO invalid_items (run, page, id, reason) VALUES (?, ?, ?, ?)');
    for (const bad of page.invalid) addInvalid.run(run, page.page, bad.id, bad.reason);
    db.prepare(
      `UPDATE runs SET checkpoint_page = ?, pages = pages + 1, items = items + ?, invalid = invalid + ?,
         heartbeat_at = ? WHERE run = ?`,
    ).run(page.page, fresh, page.invalid.length, now.toISOString(), run);
  }).immediate();
}

/** Stages items found still present while confirming removals; they are part of the run like any other. */
export function stageConfirmed(store: Store, run: number, items: readonly Item[]): void {
  const { db } = store;
  db.transaction(() => {
    const fresh = insertItems(store, run, CONFIRMED_PAGE, items);
    db.prepare('UPDATE runs SET items = items + ? WHERE run = ?').run(fresh, run);
  }).immediate();
}

/** Inserts or refreshes staged rows; returns how many ids were new to the run. */
function insertItems(store: Store, run: number, page: number, items: readonly Item[]): number {
  const { db } = store;
  const names = ITEM_COLUMNS.map((c) => `@${c}`).join(', ');
  const insert = db.prepare(
    `INSERT OR IGNORE INTO staged_items (run, page, ${ITEM_COLUMNS.join(', ')}) VALUES (@run, @page, ${names})`,
  );
  const refresh = db.prepare(
    `UPDATE staged_items SET page = @page, ${ITEM_COLUMNS.map((c) => `${c} = @${c}`).join(', ')}
       WHERE run = @run AND id = @id`,
  );
  let fresh = 0;
  for (const item of items) {
    const row = { ...itemToRow(item), run, page };
    if (insert.run(row).changes === 1) fresh += 1;
    else refresh.run(row);
  }
  return fresh;
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
    .all(run, run) as ItemRow[];
  return rows.map(rowToItem);
}
