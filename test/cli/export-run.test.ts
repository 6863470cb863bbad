import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ExportRequest, exportRun } from '../../src/cli/export-run.js';
import { StoreError, UsageError } from '../../src/errors.js';
import { openStore } from '../../src/store/open.js';
import { type ShopPaths, shopPaths } from '../../src/store/paths.js';
import { beginRun, failRun } from '../../src/store/run-records.js';
import { INVENTORY_HEADER } from '../export/expected.js';
import { querySqlite } from '../export/python.js';
import { commitItems, makeItem, tempDir } from '../store/fixtures.js';

let temp: ReturnType<typeof tempDir>;
let paths: ShopPaths;
beforeEach(() => {
  temp = tempDir('shop-sync-export-run-');
  paths = shopPaths(temp.dir, 'north');
});
afterEach(() => temp.cleanup());

function collect(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

const request = (extra: Partial<ExportRequest>): ExportRequest => ({
  shop: 'north',
  paths,
  run: undefined,
  format: 'csv',
  out: undefined,
  stdout: collect().stream,
  ...extra,
});

/** Two complete runs and a failed one after them. */
async function history(): Promise<number[]> {
  const store = openStore(paths.store);
  try {
    const first = await commitItems(store, [[makeItem('a'), makeItem('b')]]);
    const second = await commitItems(store, [[makeItem('a', { quantity: 9 })]]);
    failRun(store, beginRun(store, { query: 'q', resumeWindowMinutes: 0 }).run, 'HTTP 503');
    return [first, second];
  } finally {
    store.close();
  }
}

describe('exportRun', () => {
  it('writes the latest complete run as CSV to stdout, or any complete run to a file', async () => {
    const [first] = await history();
    const out = collect();
    expect(await exportRun(request({ stdout: out.stream }))).toBe(2);
    expect(out.text().split('\n')).toHaveLength(3);
    expect(out.text().startsWith(`${INVENTORY_HEADER}\n`)).toBe(true);

    const file = path.join(temp.dir, 'first.csv');
    expect(await exportRun(request({ run: first, out: file }))).toBe(first);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(3);
  });

  it('writes a snapshot.sqlite file with --format sqlite', async () => {
    await history();
    const file = path.join(temp.dir, 'north.sqlite');
    await exportRun(request({ format: 'sqlite', out: file }));
    expect(querySqlite(file, 'SELECT run, previous_run FROM meta')).toEqual([{ run: 2, previous_run: 1 }]);
    expect(querySqlite(file, 'SELECT id, quantity FROM items')).toEqual([{ id: 'a', quantity: 9 }]);
  });

  it('refuses what cannot be exported with one sentence each', async () => {
    await expect(exportRun(request({}))).rejects.toThrow(
      new StoreError(
        `Shop north has no store at ${paths.store} yet: run "shop-sync sync" first.`,
        paths.store,
      ),
    );
    await history();
    await expect(exportRun(request({ format: 'sqlite' }))).rejects.toBeInstanceOf(UsageError);
    await expect(exportRun(request({ run: 3 }))).rejects.toThrow(
      'Run 3 of shop north is not complete (failed): only complete runs can be exported.',
    );
    await expect(exportRun(request({ run: 7 }))).rejects.toThrow('Run 7 does not exist in shop north.');
  });
});
