import { PassThrough, Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CsvColumn } from '../../src/export/columns.js';
import { csvCell, writeCsv } from '../../src/export/csv.js';
import { csvStringifyRecord, trickyText } from './expected.js';

interface Row {
  name: string;
  amount: number | null;
}
const COLUMNS: readonly CsvColumn<Row>[] = [
  { name: 'name', text: true, value: (r) => r.name },
  { name: 'amount', text: false, value: (r) => r.amount },
];

async function written(rows: Iterable<Row>): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  await writeCsv(rows, COLUMNS, out);
  return Buffer.concat(chunks).toString('utf8');
}

describe('writeCsv', () => {
  it('writes a header, quotes where needed, guards formulas in text cells only, nulls empty', async () => {
    expect(
      await written([
        { name: 'plain', amount: -1.5 },
        { name: '=1+1', amount: null },
        { name: 'a "quoted", line\nbreak', amount: 0 },
      ]),
    ).toBe('name,amount\nplain,-1.5\n\'=1+1,\n"a ""quoted"", line\nbreak",0\n');
  });

  it('waits for a slow destination and leaves it open for the caller', async () => {
    let received = 0;
    const slow = new Writable({
      highWaterMark: 64,
      write(chunk: Buffer, _encoding, done) {
        received += chunk.length;
        setImmediate(done);
      },
    });
    const rows = Array.from({ length: 2000 }, (_, n) => ({ name: `row ${n}`, amount: n }));
    await writeCsv(rows, COLUMNS, slow);
    expect(slow.writableEnded).toBe(false);
    slow.end();
    expect(received).toBeGreaterThan(2000 * 8);
  });

  it('fails with the destination’s error instead of waiting for a drain that never comes', async () => {
    const broken = new Writable({
      highWaterMark: 16,
      write(_chunk, _encoding, done) {
        done(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
      },
    });
    const rows = Array.from({ length: 10_000 }, (_, n) => ({ name: `row ${n}`, amount: n }));
    await expect(writeCsv(rows, COLUMNS, broken)).rejects.toThrow('ENOSPC');
  });
});

describe('the CSV rules, held to the csv-stringify output they replace', () => {
  it('csvCell writes every text and number cell as csv-stringify did', () => {
    fc.assert(
      fc.property(fc.array(fc.option(trickyText), { minLength: 1 }), fc.boolean(), (cells, text) => {
        const record = `${cells.map((cell) => csvCell(cell, text)).join(',')}\n`;
        expect(Buffer.from(record)).toEqual(Buffer.from(csvStringifyRecord(cells, text)));
      }),
      { numRuns: 500 },
    );
  });
});
