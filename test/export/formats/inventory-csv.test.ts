import { readFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Decimal } from '../../../src/domain/decimal.js';
import type { Item } from '../../../src/domain/item.js';
import { storeItems, writeInventoryCsv } from '../../../src/export/formats/inventory-csv.js';
import { runContents } from '../../../src/export/formats/run-contents.js';
import { buildSnapshotSqlite } from '../../../src/export/formats/snapshot-sqlite.js';
import { writeFileAtomic } from '../../../src/export/publish/atomic.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { getRun, type RunSummary } from '../../../src/store/run-records.js';
import { commitItems, makeItem, openTempStore, tempDir, truthById } from '../../store/fixtures.js';
import { anyItem, INVENTORY_HEADER, inventoryRecord } from '../expected.js';
import { readCsvRecords } from '../python.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  sim = await startSimulator({ items: 120, seed: 3 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-csv-');
});
afterEach(() => temp.cleanup());

const price = (text: string) => text as Decimal;

/**
 * Writes `items`, committed as a run of a fresh store, as `name` from the store; the same lines read
 * from a snapshot.sqlite built of that run must be the same bytes.
 */
async function writeInventory(items: readonly Item[], name: string): Promise<string> {
  const store = openTempStore(path.join(temp.dir, `${name}.store`));
  try {
    const run = await commitItems(store, [items]);
    const file = path.join(temp.dir, name);
    await writeFileAtomic(file, (out) => writeInventoryCsv(store.db, storeItems(), run, out));
    const contents = runContents(store, 'north', getRun(store, run) as RunSummary);
    const snapshot = await buildSnapshotSqlite(`${file}.sqlite`, store.path, contents);
    try {
      const fromSnapshot = `${file}.from-snapshot`;
      await writeFileAtomic(fromSnapshot, (out) => writeInventoryCsv(snapshot.db, snapshot.items, run, out));
      expect(readFileSync(fromSnapshot)).toEqual(readFileSync(file));
    } finally {
      snapshot.close();
    }
    return file;
  } finally {
    store.close();
  }
}

describe('inventory CSV', () => {
  it('reads back in Python as exactly the catalogue, nasty titles and descriptions included', async () => {
    const items = sim.truth().map((item) => ({ ...item, raw: '{}' }));
    const file = await writeInventory(items, 'inventory.csv');

    const records = readCsvRecords(file);
    expect(records).toEqual(truthById(sim).map(inventoryRecord));
    const titles = records.map((r) => r.title ?? '');
    expect(titles.some((t) => t.includes('\n'))).toBe(true);
    expect(titles.some((t) => t.includes('\r\n'))).toBe(true);
    expect(titles.some((t) => t.includes('"') && t.includes(','))).toBe(true);
    expect(titles.some((t) => /\p{Extended_Pictographic}/u.test(t))).toBe(true);
    expect(titles.some((t) => t.startsWith("'=HYPERLINK("))).toBe(true);
  });

  it('writes the header, true/false, empty nulls, space-separated photos and \\n record ends', async () => {
    const item = makeItem('a1', {
      title: 'Mug, "blue"',
      price: price('12.5'),
      original_price: null,
      web_url: null,
      published: false,
      quantity: 0,
      photos: ['https://img.example/1.jpg', 'https://img.example/2.jpg'],
    });
    const file = await writeInventory([item], 'one.csv');

    expect(readFileSync(file, 'utf8')).toBe(
      `${INVENTORY_HEADER}\n` +
        'a1,"Mug, ""blue""",12.5,,EUR,0,false,2024-01-01T00:00:00Z,https://market.example/v1/items/a1,,' +
        'https://img.example/1.jpg https://img.example/2.jpg,,shop-1\n',
    );
  });

  it('guards text cells that start like a formula but never alters prices or quantities', async () => {
    const starts = ['=1+2', '+49 123', '-20% off', '@home', '\ttabbed', '\rreturn'];
    const items = starts.map((title, n) =>
      makeItem(`i${n}`, { title, description: title, price: price('-1.5'), original_price: price('-0.3') }),
    );
    const file = await writeInventory(items, 'guard.csv');

    const records = readCsvRecords(file);
    expect(records.map((r) => r.title)).toEqual(starts.map((s) => `'${s}`));
    expect(records.map((r) => r.description)).toEqual(starts.map((s) => `'${s}`));
    expect(records.map((r) => [r.price, r.original_price])).toEqual(starts.map(() => ['-1.5', '-0.3']));
  });

  it('writes only the header for an empty snapshot', async () => {
    const file = await writeInventory([], 'empty.csv');
    expect(readFileSync(file, 'utf8')).toBe(`${INVENTORY_HEADER}\n`);
  });
});

/** `inventory.csv` of `items` as csv-stringify writes it: the reference the writer is held to. */
function csvStringifyInventory(items: readonly Item[]): string {
  const columns = INVENTORY_HEADER.split(',') as (keyof Item)[];
  const data = new Set(['price', 'original_price', 'quantity', 'published']);
  const byId = [...items].sort((a, b) => Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)));
  const records = byId.map((item) =>
    columns.map((column) => {
      const value = item[column];
      const written = value === null ? '' : Array.isArray(value) ? value.join(' ') : String(value);
      return !data.has(column) && /^[=+\-@\t\r]/.test(written) ? `'${written}` : written;
    }),
  );
  return stringify(records, {
    header: true,
    columns,
    record_delimiter: 'unix',
    quote_record_delimiter: true,
  });
}

describe('inventory CSV, held to csv-stringify', () => {
  it('is byte for byte what csv-stringify writes, for any items', async () => {
    let written = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(anyItem, { selector: (item) => item.id, maxLength: 12 }),
        async (items) => {
          written += 1;
          const file = await writeInventory(items, `any-${written}.csv`);
          expect(readFileSync(file)).toEqual(Buffer.from(csvStringifyInventory(items)));
        },
      ),
      { numRuns: 40 },
    );
  });
});
