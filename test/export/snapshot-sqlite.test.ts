import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Decimal, parseDecimal } from '../../src/domain/decimal.js';
import { runContents } from '../../src/export/run-contents.js';
import {
  isReusableSnapshot,
  rewriteSnapshotHeader,
  SNAPSHOT_SCHEMA_VERSION,
  writeSnapshotSqlite,
} from '../../src/export/snapshot-sqlite.js';
import type { Store } from '../../src/store/open.js';
import { getRun, type RunSummary } from '../../src/store/runs.js';
import { commitItems, makeItem, openTempStore, tempDir } from '../store/fixtures.js';
import { querySqlite } from './python.js';

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

async function write(run: number): Promise<RunSummary> {
  const summary = getRun(store, run) as RunSummary;
  await writeSnapshotSqlite(file, runContents(store, 'north', summary));
  return summary;
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

  it('can be reused for a later run with the same items: only the header is rewritten', async () => {
    const first = await firstRun();
    await write(first);
    expect(isReusableSnapshot(file, first)).toBe(true);
    expect(isReusableSnapshot(file, first + 1)).toBe(false);
    const second = await commitItems(store, [[makeItem('x')]]);
    const summary = getRun(store, second) as RunSummary;

    rewriteSnapshotHeader(file, runContents(store, 'north', summary, first));
    expect(querySqlite(file, 'SELECT run, previous_run FROM meta')).toEqual([
      { run: second, previous_run: first },
    ]);
    expect(querySqlite(file, 'SELECT run, items FROM run')).toEqual([{ run: second, items: 1 }]);
  });

  it('is not reusable once it holds changes', async () => {
    await firstRun();
    const second = await commitItems(store, [[makeItem('x')]]);
    await write(second);
    expect(isReusableSnapshot(file, second)).toBe(false);
  });
});
