import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Change } from '../../src/domain/change.js';
import type { Decimal } from '../../src/domain/decimal.js';
import { writeFileAtomic } from '../../src/export/atomic.js';
import { writeChangesCsv } from '../../src/export/changes-csv.js';
import { writeInventoryCsv } from '../../src/export/inventory-csv.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { makeItem, tempDir } from '../store/fixtures.js';
import { CHANGES_HEADER, changeRecord, INVENTORY_HEADER, inventoryRecord } from './expected.js';
import { readCsv, readCsvRecords } from './python.js';

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

describe('changes CSV', () => {
  it('writes added, removed and updated rows with their before and after values', async () => {
    const before = makeItem('u1', { title: '-old', price: price('10'), quantity: 3, published: true });
    const after = { ...before, title: '=new', price: price('-12.25'), published: false };
    const gone = makeItem('r1', { title: 'Gone, "really"', price: price('0.3'), quantity: 1 });
    const fresh = makeItem('a1', { title: '@fresh', price: price('5'), quantity: 7 });
    const changes: Change[] = [
      { change: 'added', id: 'a1', title: fresh.title, fields: [], before: null, after: fresh },
      { change: 'removed', id: 'r1', title: gone.title, fields: [], before: gone, after: null },
      {
        change: 'updated',
        id: 'u1',
        title: after.title,
        fields: ['price', 'published', 'title'],
        before,
        after,
      },
    ];
    const file = path.join(temp.dir, 'changes.csv');
    await writeFileAtomic(file, (out) => writeChangesCsv(changes, out));

    expect(readCsv(file)[0]?.join(',')).toBe(CHANGES_HEADER);
    expect(readCsvRecords(file)).toEqual(changes.map(changeRecord));
    expect(readCsvRecords(file)[2]).toMatchObject({
      title: "'=new",
      changed_fields: 'price|published|title',
      price_before: '10',
      price_after: '-12.25',
      published_before: 'true',
      published_after: 'false',
    });
  });
});
