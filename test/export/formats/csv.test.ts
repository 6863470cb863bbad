import { PassThrough, Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CsvColumn } from '../../../src/export/formats/columns.js';
import { writeCsv } from '../../../src/export/formats/csv.js';
import { guarded, trickyText } from '../expected.js';

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

/** A record as the contract words the CSV: guarded text, quoted when it holds `,`, `"`, `\n` or `\r`. */
function contractRecord(row: Row): string {
  const quoted = (cell: string) => (/[,"\n\r]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);
  return `${quoted(guarded(row.name))},${row.amount === null ? '' : quoted(String(row.amount))}\n`;
}

describe('the CSV rules', () => {
  it('writes any text and numbers as the contract words them', async () => {
    const row = fc.record({
      name: trickyText,
      amount: fc.option(fc.oneof(fc.integer(), fc.double({ noNaN: true })), { nil: null }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 250 }), async (rows) => {
        expect(Buffer.from(await written(rows))).toEqual(
          Buffer.from(`name,amount\n${rows.map(contractRecord).join('')}`),
        );
      }),
      { numRuns: 300 },
    );
  });
});
