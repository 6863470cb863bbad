import { execFileSync } from 'node:child_process';

/**
 * Reads feeds back with Python's csv, gzip and sqlite3 modules: an independent implementation, so a
 * bug shared by our writer and a JavaScript reader cannot hide.
 */
const CSV = `
import csv, gzip, json, sys
path = sys.argv[1]
opener = gzip.open if path.endswith('.gz') else open
with opener(path, 'rt', encoding='utf-8', newline='') as f:
    print(json.dumps(list(csv.reader(f, strict=True))))
`;

const SQL = `
import json, sqlite3, sys
db = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
db.row_factory = sqlite3.Row
print(json.dumps([dict(row) for row in db.execute(sys.argv[2])]))
`;

/** Every record of a CSV (or gzipped CSV) file, header first, as Python's csv module reads it. */
export function readCsv(file: string): string[][] {
  return JSON.parse(execFileSync('python3', ['-c', CSV, file], { encoding: 'utf8', maxBuffer: 1 << 28 }));
}

/** The records as objects keyed by the header row. */
export function readCsvRecords(file: string): Record<string, string>[] {
  const [header = [], ...rows] = readCsv(file);
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])));
}

/** Rows of a query, read with Python's sqlite3 module. */
export function querySqlite(file: string, sql: string): Record<string, unknown>[] {
  return JSON.parse(
    execFileSync('python3', ['-c', SQL, file, sql], { encoding: 'utf8', maxBuffer: 1 << 28 }),
  );
}
