import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Item } from '../../../src/domain/item.js';
import { writeInventoryCsv } from '../../../src/export/formats/inventory-csv.js';
import { spliceInventoryCsv, UnlikeSnapshot } from '../../../src/export/formats/inventory-splice.js';
import { runContents } from '../../../src/export/formats/run-contents.js';
import { buildSnapshotSqlite, updateSnapshotSqlite } from '../../../src/export/formats/snapshot-sqlite.js';
import { streamInto, writeFileAtomic } from '../../../src/export/publish/atomic.js';
import type { Store } from '../../../src/store/open.js';
import { getRun, type RunSummary } from '../../../src/store/run-records.js';
import { commitItems, makeItem, openTempStore, tempDir } from '../../store/fixtures.js';
import { anyItem } from '../expected.js';

let temp: ReturnType<typeof tempDir>;
let store: Store;
let round = 0;
beforeEach(() => {
  temp = tempDir('shop-sync-splice-');
  store = openTempStore(temp.dir);
});
afterEach(() => {
  store.close();
  temp.cleanup();
});

const contentsOf = (run: number, from?: number) =>
  runContents(store, 'north', getRun(store, run) as RunSummary, from);

/** The published feeds of run `run`: a built snapshot and the inventory CSV written from it. */
async function publish(run: number): Promise<{ csv: string; snapshot: string }> {
  round += 1;
  const snapshot = path.join(temp.dir, `published-${round}.sqlite`);
  const csv = path.join(temp.dir, `published-${round}.csv`);
  const built = await buildSnapshotSqlite(snapshot, store.path, contentsOf(run));
  try {
    await writeFileAtomic(csv, (out) => writeInventoryCsv(built.db, built.items, run, out));
  } finally {
    built.close();
  }
  return { csv, snapshot };
}

/**
 * `inventory.csv` of run `run` spliced from `published` (of run `from`), and as a full write of the
 * same updated snapshot writes it.
 */
async function splicedAndFull(
  published: { csv: string; snapshot: string },
  run: number,
  from: number,
): Promise<{ spliced: Buffer; full: Buffer }> {
  const file = path.join(temp.dir, `updated-${round}.sqlite`);
  copyFileSync(published.snapshot, file);
  const updated = await updateSnapshotSqlite(file, store.path, contentsOf(run, from));
  try {
    const spliced = path.join(temp.dir, `spliced-${round}.csv`);
    const full = path.join(temp.dir, `full-${round}.csv`);
    await streamInto(spliced, (out) => spliceInventoryCsv(updated.db, updated.items, published, out));
    await writeFileAtomic(full, (out) => writeInventoryCsv(updated.db, updated.items, run, out));
    return { spliced: readFileSync(spliced), full: readFileSync(full) };
  } finally {
    updated.close();
  }
}

/** Two runs' items: the second keeps, changes or removes each of the first's and adds others. */
const twoRuns = fc
  .uniqueArray(anyItem, { selector: (item) => item.id, maxLength: 12 })
  .chain((before) =>
    fc.tuple(
      fc.constant(before),
      fc.array(fc.constantFrom('keep', 'change', 'remove'), {
        minLength: before.length,
        maxLength: before.length,
      }),
      fc.uniqueArray(anyItem, { selector: (item) => item.id, maxLength: 6 }),
    ),
  )
  .map(([before, fates, fresh]) => {
    const after = new Map<string, Item>();
    before.forEach((item, n) => {
      if (fates[n] === 'keep') after.set(item.id, item);
      if (fates[n] === 'change') after.set(item.id, { ...item, title: `${item.title},"\n`, quantity: 7 });
    });
    for (const item of fresh) if (!before.some((b) => b.id === item.id)) after.set(item.id, item);
    return { before, after: [...after.values()] };
  });

describe('inventory.csv spliced from the published one', () => {
  it('is byte for byte what a full write writes, for any items and any changes', async () => {
    await fc.assert(
      fc.asyncProperty(twoRuns, async ({ before, after }) => {
        const first = await commitItems(store, [before]);
        const published = await publish(first);
        const second = await commitItems(store, [after]);
        const { spliced, full } = await splicedAndFull(published, second, first);
        expect(spliced).toEqual(full);
      }),
      { numRuns: 60 },
    );
  });

  it('splices a file read in many chunks, records cut across their ends, at its start and its end', async () => {
    const text = (n: number) => `line ${n}\n"quoted, ""twice"""\r\n${'é😀'.repeat(n % 40)}`;
    const ids = Array.from({ length: 1500 }, (_, n) => `id-${String(n).padStart(5, '0')}`);
    const first = await commitItems(store, [ids.map((id, n) => makeItem(id, { description: text(n) }))]);
    const published = await publish(first);
    expect(readFileSync(published.csv).length).toBeGreaterThan(4 * 65536);
    const kept = ids.filter((_, n) => n % 7 !== 3 && n !== 0 && n !== ids.length - 1);
    const second = await commitItems(store, [
      [
        makeItem('a-first'),
        ...kept.map((id, n) => makeItem(id, { description: text(n % 11 === 0 ? n + 1 : n) })),
        makeItem('id-00010a', { title: '=added' }),
        makeItem('z-last'),
      ],
    ]);
    const { spliced, full } = await splicedAndFull(published, second, first);
    expect(spliced.toString()).toEqual(full.toString());
  });

  it.each([
    ['a different header', (csv: string) => csv.replace('id,title', 'id,name')],
    ['a record missing', (csv: string) => csv.replace(/\nb,[^\n]*\n/, '\n')],
    ['a record more', (csv: string) => `${csv}zz,extra\n`],
    ['a changed record altered', (csv: string) => csv.replace('Item c', 'Item C')],
    ['no header', () => ''],
    ['an unfinished last record', (csv: string) => csv.slice(0, -1)],
  ])('refuses a published file with %s', async (_, alter) => {
    const first = await commitItems(store, [['a', 'b', 'c', 'd'].map((id) => makeItem(id))]);
    const published = await publish(first);
    writeFileSync(published.csv, alter(readFileSync(published.csv, 'utf8')));
    const second = await commitItems(store, [
      [makeItem('a'), makeItem('b'), makeItem('c', { quantity: 3 }), makeItem('d')],
    ]);
    await expect(splicedAndFull(published, second, first)).rejects.toThrow(UnlikeSnapshot);
  });
});
