import { readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Decimal, parseDecimal } from '../../../src/domain/decimal.js';
import type { Item } from '../../../src/domain/item.js';
import { runContents } from '../../../src/export/formats/run-contents.js';
import {
  buildSnapshotSqlite,
  isSnapshotOf,
  SNAPSHOT_SCHEMA_VERSION,
  updateSnapshotSqlite,
  writeSnapshotSqlite,
} from '../../../src/export/formats/snapshot-sqlite.js';
import type { Store } from '../../../src/store/open.js';
import { getRun, type RunSummary } from '../../../src/store/run-records.js';
import { commitItems, makeItem, openTempStore, tempDir } from '../../store/fixtures.js';
import { querySqlite } from '../python.js';

let temp: ReturnType<typeof tempDir>;
let store: Store;
let file: string;
beforeEach(() => {
  temp = tempDir('shop-sync-snapshot-');
  store = openTempStore(temp.dir);
  file = path.join(temp.dir, 'snapshot.sqlite');
});
afterEach(() => {
  store.close();
  temp.cleanup();
});

const price = (text: string) => parseDecimal(text) as Decimal;
/** Prices around 1000 that a TEXT column orders and compares wrongly ('999.99' > '1000'). */
const PRICES: Record<string, string> = {
  a: '999.99',
  b: '1000',
  c: '1000.01',
  d: '12.5',
  e: '20000',
  f: '0.3',
  g: '9999',
  h: '100.10',
};

async function firstRun(): Promise<number> {
  return commitItems(store, [
    Object.entries(PRICES).map(([id, text]) =>
      makeItem(id, {
        price: price(text),
        original_price: id === 'a' ? price('1200.5') : null,
        published: id !== 'b',
        photos: id === 'c' ? ['https://img.example/1.jpg', 'https://img.example/2.jpg'] : [],
        photos_id: id === 'c' ? [1, 2] : [],
      }),
    ),
  ]);
}

async function write(run: number, target = file, from?: number): Promise<RunSummary> {
  const summary = getRun(store, run) as RunSummary;
  await writeSnapshotSqlite(target, store.path, runContents(store, 'north', summary, from));
  return summary;
}

interface Version {
  shop: string;
  name: string;
  quantity: number;
  title: string;
  price: string;
}

/** Turns `target`, the snapshot file of run `from`, into the snapshot of `run`. */
async function update(target: string, run: number, from: number): Promise<void> {
  const contents = runContents(store, 'north', getRun(store, run) as RunSummary, from);
  (await updateSnapshotSqlite(target, store.path, contents)).close();
}

/** Every table's rows with each value's SQLite type, in key order; `meta` without its time of writing. */
type Contents = Record<'schema' | 'meta' | 'run' | 'items' | 'shops' | 'changes', unknown[]>;

function contentsOf(target: string): Contents {
  const db = new Database(target, { readonly: true });
  try {
    const typed = (table: string, order: string) => {
      const columns = db
        .prepare(`SELECT name FROM pragma_table_info('${table}') WHERE name <> 'generated_at'`)
        .pluck()
        .all() as string[];
      const select = columns.map((c) => `${c}, typeof(${c}) AS ${c}_type`).join(', ');
      return db.prepare(`SELECT ${select} FROM ${table} ORDER BY ${order}`).all();
    };
    return {
      schema: db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all(),
      meta: typed('meta', 'run'),
      run: typed('run', 'run'),
      items: typed('items', 'id'),
      shops: typed('shops', 'shop_id'),
      changes: typed('changes', 'id'),
    };
  } finally {
    db.close();
  }
}

describe('snapshot.sqlite as a consumer queries it (Python sqlite3)', () => {
  it('compares and orders prices as numbers, with the exact decimal beside them', async () => {
    await write(await firstRun());
    expect(querySqlite(file, 'SELECT id FROM items WHERE price > 1000 ORDER BY id')).toEqual(
      ['c', 'e', 'g'].map((id) => ({ id })),
    );
    expect(querySqlite(file, 'SELECT price_text FROM items ORDER BY price')).toEqual(
      ['0.3', '12.5', '100.1', '999.99', '1000', '1000.01', '9999', '20000'].map((p) => ({ price_text: p })),
    );
    expect(
      querySqlite(
        file,
        "SELECT price, price_text, original_price, original_price_text FROM items WHERE id IN ('a', 'd') ORDER BY id",
      ),
    ).toEqual([
      { price: 999.99, price_text: '999.99', original_price: 1200.5, original_price_text: '1200.5' },
      { price: 12.5, price_text: '12.5', original_price: null, original_price_text: null },
    ]);
    expect(
      querySqlite(file, "SELECT name, type FROM pragma_table_info('items') WHERE name LIKE '%price%'"),
    ).toEqual([
      { name: 'price', type: 'REAL' },
      { name: 'price_text', type: 'TEXT' },
      { name: 'original_price', type: 'REAL' },
      { name: 'original_price_text', type: 'TEXT' },
    ]);
  });

  it('gives every price the REAL that JavaScript reads from its text, however many digits it has', async () => {
    // SQLite reads these (more than 19 digits) one unit in the last place away from JavaScript.
    const long = ['3098204.66404280648580380529481', '962295313250.601135262758134', '41702373500.274158479'];
    const short = ['0.1', '999999999999999.99', '123456789012345678'];
    const run = await commitItems(store, [
      [...long, ...short].map((text, n) =>
        makeItem(`p${n}`, { price: price(text), original_price: price(text) }),
      ),
    ]);
    await write(run);
    const db = new Database(file, { readonly: true });
    try {
      const rows = db.prepare('SELECT price, price_text, original_price FROM items ORDER BY id').all() as {
        price: number;
        price_text: string;
        original_price: number;
      }[];
      expect(rows.map((r) => [r.price, r.original_price])).toEqual(
        rows.map((r) => [Number(r.price_text), Number(r.price_text)]),
      );
    } finally {
      db.close();
    }
  });

  it('writes published as 0/1 and both photo lists as JSON arrays of the same length', async () => {
    await write(await firstRun());
    expect(querySqlite(file, 'SELECT id FROM items WHERE published = 0')).toEqual([{ id: 'b' }]);
    expect(
      querySqlite(
        file,
        "SELECT id, json_array_length(photos) AS photos, json_array_length(photos_id) AS ids, photos ->> 1 AS second FROM items WHERE photos <> '[]'",
      ),
    ).toEqual([{ id: 'c', photos: 2, ids: 2, second: 'https://img.example/2.jpg' }]);
    expect(
      querySqlite(file, "SELECT count(*) AS n FROM items WHERE photos = '[]' AND photos_id = '[]'"),
    ).toEqual([{ n: 7 }]);
  });

  it('describes itself in meta and records changes with numeric and exact prices', async () => {
    const first = await firstRun();
    const second = await commitItems(store, [
      [makeItem('a', { price: price('1000.5'), published: false }), makeItem('z', { price: price('3') })],
    ]);
    await write(second);

    const [meta] = querySqlite(file, 'SELECT * FROM meta');
    expect(meta).toEqual({
      shop: 'north',
      run: second,
      previous_run: first,
      generated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      schema_version: SNAPSHOT_SCHEMA_VERSION,
    });
    expect(
      querySqlite(file, "SELECT * FROM changes WHERE change = 'updated' OR id = 'z' ORDER BY id"),
    ).toEqual([
      {
        change: 'updated',
        id: 'a',
        title: 'Item a',
        changed_fields: 'price|original_price|published',
        price_before: 999.99,
        price_before_text: '999.99',
        price_after: 1000.5,
        price_after_text: '1000.5',
        quantity_before: 1,
        quantity_after: 1,
        published_before: 1,
        published_after: 0,
      },
      {
        change: 'added',
        id: 'z',
        title: 'Item z',
        changed_fields: '',
        price_before: null,
        price_before_text: null,
        price_after: 3,
        price_after_text: '3',
        quantity_before: null,
        quantity_after: 1,
        published_before: null,
        published_after: 1,
      },
    ]);
    expect(querySqlite(file, "SELECT count(*) AS n FROM changes WHERE change = 'removed'")).toEqual([
      { n: 7 },
    ]);
  });

  it('is written with its journal in memory: no journal file beside it for each slice', async () => {
    const first = await firstRun();
    const contents = runContents(store, 'north', getRun(store, first) as RunSummary);
    const snapshot = await buildSnapshotSqlite(file, store.path, contents);
    try {
      expect(snapshot.db.pragma('journal_mode', { simple: true })).toBe('memory');
    } finally {
      snapshot.close();
    }
  });

  it('is a sound file of 16 KiB pages, and never overwrites a file already there', async () => {
    const first = await firstRun();
    await write(first);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('page_size', { simple: true })).toBe(16384);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare('SELECT run FROM meta').pluck().get()).toBe(first);
    } finally {
      db.close();
    }
    const before = readFileSync(file);
    const contents = runContents(store, 'north', getRun(store, first) as RunSummary);
    await expect(buildSnapshotSqlite(file, store.path, contents)).rejects.toThrow(/EEXIST/);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('is recognised as the snapshot of its run in this version’s tables', async () => {
    const first = await firstRun();
    await write(first);
    expect(isSnapshotOf(file, first)).toBe(true);
    expect(isSnapshotOf(file, first + 1)).toBe(false);
    const db = new Database(file);
    db.exec('ALTER TABLE items ADD COLUMN extra TEXT');
    db.close();
    expect(isSnapshotOf(file, first)).toBe(false);
  });

  it('updated for a later run, rewrites its description and changes and only the changed items', async () => {
    const shop = (id: string, name: string) => ({
      shop_id: id,
      shop_name: name,
      shop_url: `https://s/${id}`,
    });
    const item = (id: string, extra: Partial<Item> = {}) => makeItem(id, { ...shop('s1', 'One'), ...extra });
    const first = await commitItems(store, [
      [
        item('a'),
        item('b', { price: price('999999999999.123456789') }),
        item('c', shop('s2', 'Two')),
        item('d', shop('s2', 'Two')),
        item('e', shop('s3', 'Three')),
      ],
    ]);
    // The first items of shops s1 and s2 go, s3's only item goes, new items and a new shop come.
    const second = await commitItems(store, [
      [
        item('b', { price: price('0.1'), quantity: 5, title: '=sum' }),
        item('d', shop('s2', 'Two renamed')),
        item('aa', { published: false, original_price: price('12345678901234567.5') }),
        item('f', { ...shop('s4', 'Four'), photos: ['x "y"', 'z'], photos_id: [1, 2] }),
      ],
    ]);
    const updated = path.join(temp.dir, 'updated.sqlite');
    await write(first, updated);
    await update(updated, second, first);
    await write(second, file, first);

    const full = contentsOf(file);
    expect(full.items).toHaveLength(4);
    expect(full.shops.map((s) => (s as { shop_name: string }).shop_name)).toEqual([
      'One',
      'Two renamed',
      'Four',
    ]);
    expect(contentsOf(updated)).toEqual(full);
    expect(querySqlite(updated, 'SELECT run, previous_run FROM meta')).toEqual([
      { run: second, previous_run: first },
    ]);
    expect(isSnapshotOf(updated, second)).toBe(true);
  });

  it('updated for a later run with any changes, holds what a build of that run holds', async () => {
    const version = fc.record({
      shop: fc.constantFrom('s1', 's2', 's3'),
      name: fc.constantFrom('One', 'Uno'),
      quantity: fc.nat({ max: 3 }),
      title: fc.constantFrom('t', '=t', 't, "quoted"'),
      price: fc.constantFrom('0.1', '999999999999.123456789', '12345678901234567.5'),
    });
    const ids = fc.constantFrom('a', 'b', 'c', 'd', '=e', "'=e", 'f,"g"', 'h\ni', 'é', '\u{1F600}', '\uFFFD');
    const catalogue = fc.dictionary(ids, version, { maxKeys: 11 });
    const items = (entries: Record<string, Version>) =>
      Object.entries(entries).map(([id, v]) =>
        makeItem(id, {
          shop_id: v.shop,
          shop_name: `${v.name} ${v.shop}`,
          quantity: v.quantity,
          title: v.title,
          price: price(v.price),
        }),
      );
    let round = 0;
    await fc.assert(
      fc.asyncProperty(catalogue, catalogue, async (before, after) => {
        round += 1;
        const first = await commitItems(store, [items(before)]);
        const second = await commitItems(store, [items(after)]);
        const updated = path.join(temp.dir, `updated-${round}.sqlite`);
        const built = path.join(temp.dir, `built-${round}.sqlite`);
        await write(first, updated);
        await update(updated, second, first);
        await write(second, built, first);
        expect(contentsOf(updated)).toEqual(contentsOf(built));
      }),
      { numRuns: 40 },
    );
  });
});
