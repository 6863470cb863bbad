import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimItem, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { querySqlite } from '../export/python.js';
import { runCli } from '../helpers/cli.js';
import { simEnv, tempDir, truthById } from '../store/fixtures.js';

/**
 * A reader of `inventory.sqlite` (README "Files"), with Python's sqlite3 and no help from shop-sync:
 * the store written by two syncs through the CLI, queried against what the simulator lists.
 */

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let store: string;
let snapshot: string;
/** Every listed item's exact price, as the simulator sends it. */
let prices: Map<string, string>;
let truth: SimItem[];

/** Prices sent as written (JSON text) in place of the simulator's own: around 100, and beyond a double. */
const CHOSEN = {
  above: '"100.5"',
  below: '99.99',
  bound: '"100.00"',
  justAbove: '"100.00000000000000000001"',
  justBelow: '"99.999999999999999999"',
  long: '"12345678901234567890.12345678901234567891"',
} as const;
const chosenId: Record<string, string> = {};
/** An item whose original price alone changes in run 2. */
let originalOnly: string;

/** Whether exact decimal `a` (plain, no exponent, as the store keeps it) is greater than `b`. */
function greater(a: string, b: string): boolean {
  const [ai = '', af = ''] = a.split('.');
  const [bi = '', bf = ''] = b.split('.');
  if (ai.length !== bi.length) return ai.length > bi.length;
  if (ai !== bi) return ai > bi;
  return af.replace(/0+$/, '') > bf.replace(/0+$/, '');
}

const cli = (...args: string[]) => runCli(args, { ...simEnv(sim, temp.dir), SYNC_PER_PAGE: '50' });
const ids = (rows: Record<string, unknown>[]) => rows.map((row) => row.id as string);

beforeAll(async () => {
  sim = await startSimulator({ items: 300, seed: 21 });
  temp = tempDir('shop-sync-store-readers-');
  ({ store, snapshotSqlite: snapshot } = shopPaths(temp.dir, 'shop'));
  expect((await cli('sync')).code).toBe(0);
  // Run 2 changes prices, so a reader of only the open versions or of run 1 would be wrong.
  sim.mutate({ prices: 40, add: 5, remove: 5 });
  const listed = truthById(sim);
  const names = Object.keys(CHOSEN) as (keyof typeof CHOSEN)[];
  names.forEach((name, index) => {
    chosenId[name] = (listed[index * 7] as SimItem).id;
  });
  originalOnly = (listed[names.length * 7] as SimItem).id;
  sim.mutate({
    poison: [
      ...names.map((name) => ({ id: chosenId[name] as string, field: 'price', json: CHOSEN[name] })),
      { id: originalOnly, field: 'original_price', json: '"150"' },
    ],
  });
  expect((await cli('sync')).code).toBe(0);
  truth = truthById(sim);
  prices = new Map(truth.map((item) => [item.id, item.price as string]));
  for (const name of names) prices.set(chosenId[name] as string, JSON.parse(`${CHOSEN[name]}`).toString());
  prices.set(chosenId.bound as string, '100');
}, 120_000);
afterAll(async () => {
  await sim.close();
  temp.cleanup();
});

describe('inventory.sqlite for a reader', () => {
  it('answers WHERE price > 100 on current_items with the listed items above 100', () => {
    const above = [...prices].filter(([, price]) => greater(price, '100')).map(([id]) => id);
    const rows = querySqlite(store, 'SELECT id FROM current_items WHERE price > 100 ORDER BY id');
    // Only the price of more digits than a double holds is off: it reads as 100 (see the next test).
    expect(ids(rows)).toEqual(above.filter((id) => id !== chosenId.justAbove));
    expect(querySqlite(store, 'SELECT count(*) AS n, max(run) AS run FROM current_items')).toEqual([
      { n: truth.length, run: 2 },
    ]);
    const originals = truth.map((item) => [item.id, item.id === originalOnly ? '150' : item.original_price]);
    expect(
      ids(querySqlite(store, 'SELECT id FROM current_items WHERE original_price > 100 ORDER BY id')),
    ).toEqual(originals.filter(([, price]) => price != null && greater(price, '100')).map(([id]) => id));
    // Why the view exists: on the stored TEXT, `price > 100` compares text ('99.99' > '100').
    const text = querySqlite(
      store,
      'SELECT id FROM item_versions WHERE valid_to_run IS NULL AND price > 100 ORDER BY id',
    );
    expect(ids(text)).not.toEqual(above);
  });

  it('keeps each price exact as price_text beside a REAL, typed as a reader filters it', () => {
    const rows = querySqlite(
      store,
      `SELECT id, price, price_text, price > 100 AS above, price >= 100 AS at_least
         FROM current_items WHERE id IN (${Object.values(chosenId)
           .map((id) => `'${id}'`)
           .join(', ')})`,
    );
    const byName = Object.fromEntries(
      Object.entries(chosenId).map(([name, id]) => [name, rows.find((row) => row.id === id)]),
    );
    expect(byName).toEqual({
      above: { id: chosenId.above, price: 100.5, price_text: '100.5', above: 1, at_least: 1 },
      below: { id: chosenId.below, price: 99.99, price_text: '99.99', above: 0, at_least: 0 },
      bound: { id: chosenId.bound, price: 100, price_text: '100', above: 0, at_least: 1 },
      // Beyond a double's 15 to 17 digits the REAL is the nearest double: exact only in price_text.
      justAbove: {
        id: chosenId.justAbove,
        price: 100,
        price_text: '100.00000000000000000001',
        above: 0,
        at_least: 1,
      },
      justBelow: {
        id: chosenId.justBelow,
        price: 100,
        price_text: '99.999999999999999999',
        above: 0,
        at_least: 1,
      },
      long: {
        id: chosenId.long,
        price: 12345678901234567000,
        price_text: '12345678901234567890.12345678901234567891',
        above: 1,
        at_least: 1,
      },
    });
    expect(
      querySqlite(
        store,
        'SELECT DISTINCT typeof(price) AS price, typeof(quantity) AS quantity, typeof(published) AS published FROM current_items',
      ),
    ).toEqual([{ price: 'real', quantity: 'integer', published: 'integer' }]);
  });

  it("finds snapshot.sqlite's price changes with the README's query, not original_price ones", () => {
    const changes = querySqlite(
      snapshot,
      "SELECT id, changed_fields FROM changes WHERE change = 'updated' ORDER BY id",
    );
    expect(changes).toContainEqual({ id: originalOnly, changed_fields: 'original_price' });
    const priceChanged = changes.filter((row) => String(row.changed_fields).split('|').includes('price'));
    expect(priceChanged.length).toBeGreaterThan(40);
    const readme = querySqlite(
      snapshot,
      "SELECT c.id FROM changes c WHERE '|' || c.changed_fields || '|' LIKE '%|price|%' ORDER BY c.id",
    );
    expect(ids(readme)).toEqual(ids(priceChanged));
  });

  it('gives the same items and the same REAL prices as feeds/snapshot.sqlite', () => {
    const sql = 'SELECT id, price, price_text, original_price, original_price_text, quantity FROM';
    const fromStore = querySqlite(store, `${sql} current_items ORDER BY id`);
    expect(fromStore).toEqual(querySqlite(snapshot, `${sql} items ORDER BY id`));
    expect(fromStore.map((row) => row.price_text)).toEqual(ids(fromStore).map((id) => prices.get(id)));
  });
});
