import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Change } from '../../../src/domain/change.js';
import type { Decimal } from '../../../src/domain/decimal.js';
import { writeChangesCsv } from '../../../src/export/formats/changes-csv.js';
import { writeFileAtomic } from '../../../src/export/publish/atomic.js';
import { makeItem, tempDir } from '../../store/fixtures.js';
import { CHANGES_HEADER, changeRecord } from '../expected.js';
import { readCsv, readCsvRecords } from '../python.js';

let temp: ReturnType<typeof tempDir>;
beforeEach(() => {
  temp = tempDir('shop-sync-changes-csv-');
});
afterEach(() => temp.cleanup());

const price = (text: string) => text as Decimal;

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
