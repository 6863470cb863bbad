import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Decimal } from '../../src/domain/decimal.js';
import { writeFileAtomic } from '../../src/export/atomic.js';
import { writeInventoryCsv } from '../../src/export/inventory-csv.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { makeItem, tempDir } from '../store/fixtures.js';
import { INVENTORY_HEADER, inventoryRecord } from './expected.js';
import { readCsvRecords } from './python.js';

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

describe('inventory CSV', () => {
  it('reads back in Python as exactly the catalogue, nasty titles and descriptions included', async () => {
    const items = sim.truth().map((item) => ({ ...item, raw: '{}' }));
    const file = path.join(temp.dir, 'inventory.csv');
    await writeFileAtomic(file, (out) => writeInventoryCsv(items, out));

    const records = readCsvRecords(file);
    expect(records).toEqual(sim.truth().map(inventoryRecord));
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
    const file = path.join(temp.dir, 'one.csv');
    await writeFileAtomic(file, (out) => writeInventoryCsv([item], out));

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
    const file = path.join(temp.dir, 'guard.csv');
    await writeFileAtomic(file, (out) => writeInventoryCsv(items, out));

    const records = readCsvRecords(file);
    expect(records.map((r) => r.title)).toEqual(starts.map((s) => `'${s}`));
    expect(records.map((r) => r.description)).toEqual(starts.map((s) => `'${s}`));
    expect(records.map((r) => [r.price, r.original_price])).toEqual(starts.map(() => ['-1.5', '-0.3']));
  });

  it('writes only the header for an empty snapshot', async () => {
    const file = path.join(temp.dir, 'empty.csv');
    await writeFileAtomic(file, (out) => writeInventoryCsv([], out));
    expect(readFileSync(file, 'utf8')).toBe(`${INVENTORY_HEADER}\n`);
  });
});
