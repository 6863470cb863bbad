import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CellValue, CsvColumn } from '../../../src/export/formats/columns.js';
import { csvRecords, stringifiedRecords } from '../../../src/export/formats/csv.js';
import { trickyText } from '../expected.js';

/**
 * `csvRecords`, written by hand, against csv-stringify writing the same cells (`stringifiedRecords`,
 * the reference): any text (quotes, commas, line breaks, formula starts, unicode, lone surrogates),
 * any number, flags and nulls, in text columns and others.
 */
const anyCell: fc.Arbitrary<CellValue> = fc.oneof(
  trickyText,
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom('\uFF1D', '\uFF0B', '\uFF0D', '\uFF20', '\uD800', '😀', 'é', '0', '.') }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, 1e21, -1e-7, Number.MAX_SAFE_INTEGER),
  fc.boolean(),
  fc.constant(null),
  fc.constant(''),
);

describe('csvRecords', () => {
  it('writes the very text csv-stringify writes, whatever the cells', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }).chain((texts) =>
          fc.tuple(
            fc.constant(texts),
            fc.array(fc.array(anyCell, { minLength: texts.length, maxLength: texts.length }), {
              maxLength: 20,
            }),
          ),
        ),
        ([texts, rows]) => {
          const columns: CsvColumn<CellValue[]>[] = texts.map((text, at) => ({
            name: `c${at}`,
            text,
            value: (row) => row[at] ?? null,
          }));
          expect(csvRecords(rows, columns)).toBe(stringifiedRecords(rows, columns));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
