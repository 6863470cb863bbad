import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Poison, SimItem, Simulator } from '../../src/simulator/index.js';
import { startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { querySqlite, readCsvRecords } from '../export/python.js';
import { runCli } from '../helpers/cli.js';
import { simEnv, tempDir } from '../store/fixtures.js';

/**
 * Hostile values against the CLI, through the bundled simulator as a real HTTP server: an item whose
 * value is outside the documented limits is invalid (counted, logged with its reason, kept out of the
 * feeds or at its last valid version), never rounded, and never blocks the shop; every feed is UTF-8.
 */

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({ items: 80, seed: 23 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-poison-');
  env = { ...simEnv(sim, temp.dir), SYNC_PER_PAGE: '20', LOG_LEVEL: 'warn', LOG_FORMAT: 'json' };
});
afterEach(() => {
  // Every test cures what it poisoned: the simulator is shared by the file.
  const poisoned = sim.truth().map((item) => item.id);
  sim.mutate({ cure: poisoned });
  temp.cleanup();
});

interface Summary {
  status: string;
  items: number;
  added: number;
  updated: number;
  removed: number;
  invalid: number;
  duration_ms: number;
}

async function sync(): Promise<{ summary: Summary; logs: Record<string, unknown>[]; stderr: string }> {
  const result = await runCli(['sync', '--json'], env);
  expect(result.stderr, result.stderr).not.toMatch(/unexpected error/);
  expect(result.code, result.stderr).toBe(0);
  const logs = result.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { summary: JSON.parse(result.stdout) as Summary, logs, stderr: result.stderr };
}

const paths = () => shopPaths(temp.dir, 'shop');
const inventory = () => new Map(readCsvRecords(paths().inventoryCsv).map((row) => [row.id as string, row]));
const items = (): SimItem[] => sim.truth();
const poison = (...list: Poison[]) => sim.mutate({ poison: list });
const invalidLogs = (logs: Record<string, unknown>[]) => logs.filter((log) => log.msg === 'invalid item');

describe('values outside the limits', () => {
  it('reports items with huge exponents, huge literals and inexact quantities invalid, keeps them at their last version, and completes', async () => {
    const first = await sync();
    expect(first.summary).toMatchObject({ status: 'complete', items: 80, invalid: 0 });
    const [a, b, c, d, e] = items() as [SimItem, SimItem, SimItem, SimItem, SimItem];
    poison(
      { id: a.id, field: 'price', json: '"1e999999999"' },
      { id: b.id, field: 'original_price', json: '"1e-999999999"' },
      { id: c.id, field: 'quantity', json: '9223372036854775807' },
      { id: d.id, field: 'quantity', json: '"9007199254740993"' },
      // A JSON number of 5,000,001 digits before the point: read in one pass, refused by its length.
      { id: e.id, field: 'price', json: '1.5', padZeros: 5_000_000 },
    );
    const started = Date.now();
    const second = await sync();
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(second.summary).toMatchObject({
      status: 'complete',
      items: 80,
      added: 0,
      updated: 0,
      removed: 0,
      invalid: 5,
    });
    const reasons = new Map(invalidLogs(second.logs).map((log) => [log.id, String(log.reason)]));
    expect(reasons.get(a.id)).toMatch(/^price: a decimal outside the limits, with an exponent beyond ±100/);
    expect(reasons.get(b.id)).toMatch(
      /^original_price: a decimal outside the limits, with an exponent beyond ±100/,
    );
    expect(reasons.get(c.id)).toBe(
      'quantity: not an exact integer within ±(2^53 - 1): "9223372036854775807"',
    );
    expect(reasons.get(d.id)).toBe('quantity: not an exact integer within ±(2^53 - 1): "9007199254740993"');
    expect(reasons.get(e.id)).toMatch(
      /^price: a decimal outside the limits, with 5000001 digits before the point/,
    );
    expect(reasons.get(e.id)?.length).toBeLessThan(300);
    // Kept at their last valid version: the feeds still show what the previous run read.
    const rows = inventory();
    expect(rows.size).toBe(80);
    for (const item of [a, b, c, d, e]) {
      expect(rows.get(item.id)?.price).toBe(item.price);
      expect(rows.get(item.id)?.quantity).toBe(String(item.quantity));
    }
    expect(readFileSync(paths().changesCsv, 'utf8').trim().split('\n')).toHaveLength(1);
    const runs = JSON.parse((await runCli(['runs', '--json'], env)).stdout) as { status: string }[];
    expect(runs.map((run) => run.status)).toEqual(['complete', 'complete']);

    // Cured, the items read as they were: nothing changed, nothing invalid.
    sim.mutate({ cure: [a.id, b.id, c.id, d.id, e.id] });
    const third = await sync();
    expect(third.summary).toMatchObject({ items: 80, added: 0, updated: 0, removed: 0, invalid: 0 });
  });

  it('keeps an item that was never valid out of the feeds, counted and logged', async () => {
    await sync();
    const added = sim.mutate({ add: 1 }).added[0] as string;
    poison({ id: added, field: 'price', json: '"1e999999999"' });
    const { summary, logs } = await sync();
    expect(summary).toMatchObject({ items: 80, added: 0, removed: 0, invalid: 1 });
    expect(invalidLogs(logs).map((log) => log.id)).toEqual([added]);
    expect(inventory().has(added)).toBe(false);
    expect(querySqlite(paths().snapshotSqlite, 'SELECT invalid FROM run')).toEqual([{ invalid: 1 }]);
    sim.mutate({ cure: [added] });
    expect((await sync()).summary).toMatchObject({ items: 81, added: 1, invalid: 0 });
  });

  it('never reports an item removed because its id could not be read', async () => {
    await sync();
    const listed = items().length;
    const [u] = items() as [SimItem];
    poison({ id: u.id, field: 'id', json: '{"not":"an id"}' });
    const { summary, logs } = await sync();
    expect(summary).toMatchObject({ status: 'complete', items: listed, added: 0, removed: 0, invalid: 1 });
    expect(invalidLogs(logs)).toEqual([
      expect.objectContaining({ id: null, reason: expect.stringMatching(/^id: /) }),
    ]);
    expect(inventory().get(u.id)?.price).toBe(u.price);
    expect(readFileSync(paths().changesCsv, 'utf8').trim().split('\n')).toHaveLength(1);
  });
});

describe('text that is not UTF-8', () => {
  it('writes every feed and the store as valid UTF-8, with U+FFFD in place of what was not, and logs the ids', async () => {
    // A resync, so that the changes feed and `diff` carry the repaired text too.
    await sync();
    const [f, g, h] = items() as [SimItem, SimItem, SimItem];
    poison(
      // "mug \xff\xfe": bytes that are not UTF-8.
      { id: f.id, field: 'title', hex: Buffer.from('"mug \xff\xfe"', 'latin1').toString('hex') },
      // JSON escapes of lone surrogates: valid JSON, not valid Unicode.
      { id: g.id, field: 'title', json: '"cup \\ud800"' },
      { id: h.id, field: 'description', json: '"\\udc00 lamp"' },
    );
    const { summary, logs } = await sync();
    expect(summary).toMatchObject({ status: 'complete', items: items().length, invalid: 0, updated: 3 });
    const strict = new TextDecoder('utf-8', { fatal: true });
    for (const file of [paths().inventoryCsv, paths().changesCsv])
      expect(() => strict.decode(readFileSync(file))).not.toThrow();
    const changes = readCsvRecords(paths().changesCsv);
    expect(changes.map((row) => row.title).sort()).toEqual(
      ['cup \ufffd', 'mug \ufffd\ufffd', h.title].sort(),
    );
    const diff = await runCli(['diff', '--format', 'json'], env);
    expect(diff.code).toBe(0);
    expect(() => strict.decode(Buffer.from(diff.stdout))).not.toThrow();
    expect(querySqlite(paths().snapshotSqlite, 'SELECT title FROM changes')).toHaveLength(3);
    const rows = inventory();
    expect(rows.get(f.id)?.title).toBe('mug \ufffd\ufffd');
    expect(rows.get(g.id)?.title).toBe('cup \ufffd');
    expect(rows.get(h.id)?.description).toBe('\ufffd lamp');
    // Python's sqlite3 refuses text that is not UTF-8: reading every row proves it all is.
    const texts = querySqlite(
      paths().snapshotSqlite,
      `SELECT id, title, description, hex(title) AS bytes FROM items WHERE id IN ('${f.id}', '${g.id}', '${h.id}')`,
    );
    expect(texts.map((row) => row.title).sort()).toEqual(['cup \ufffd', 'mug \ufffd\ufffd', h.title].sort());
    // And the store itself: every version's text.
    const everything = querySqlite(paths().store, 'SELECT title, description FROM item_versions');
    expect(everything).toHaveLength(items().length + 3);
    const warned = logs.filter((log) => String(log.msg).includes('U+FFFD'));
    expect(new Map(warned.map((log) => [log.id, log.fields]))).toEqual(
      new Map<unknown, unknown>([
        [f.id, ['title']],
        [g.id, ['title']],
        [h.id, ['description']],
      ]),
    );
  });
});

describe('responses over the 32 MiB cap', () => {
  const MiB = 1024 * 1024;
  // A JSON string of `size` zeros: the simulator pads the poison's first digit.
  const zeros = (size: number) => ({ json: '"0"', padZeros: size - 1 });

  it('reads a page over the cap again in smaller pages, and completes with every item', async () => {
    await sync();
    // Three items of the first page of 20, each under the cap, together over it.
    const [a, b, c] = items() as [SimItem, SimItem, SimItem];
    poison(...[a, b, c].map((item) => ({ id: item.id, field: 'description', ...zeros(12 * MiB) })));
    const { summary } = await sync();
    expect(summary).toMatchObject({
      status: 'complete',
      items: items().length,
      added: 0,
      removed: 0,
      invalid: 0,
    });
    // Python's csv module refuses fields over 128 KiB: read the lengths from snapshot.sqlite instead.
    const lengths = querySqlite(paths().snapshotSqlite, 'SELECT id, length(description) AS size FROM items');
    expect(lengths).toHaveLength(items().length);
    const size = new Map(lengths.map((row) => [row.id, row.size]));
    for (const item of [a, b, c]) expect(size.get(item.id)).toBe(12 * MiB);
  });

  it('reports an item alone over the cap invalid, keeps it at its last version, and completes', async () => {
    await sync();
    const before = readFileSync(paths().inventoryCsv);
    const [, , , big] = items() as SimItem[];
    const bigItem = big as SimItem;
    poison({ id: bigItem.id, field: 'description', ...zeros(33 * MiB) });
    const { summary, logs } = await sync();
    expect(summary).toMatchObject({
      status: 'complete',
      items: items().length,
      added: 0,
      updated: 0,
      removed: 0,
      invalid: 1,
    });
    expect(invalidLogs(logs)).toEqual([
      expect.objectContaining({
        id: null,
        reason: expect.stringMatching(
          /^the item at position 4 of the listing alone is larger than the 32 MiB response cap/,
        ),
      }),
    ]);
    // Never reported removed: its last valid version stays in the feeds, and no change is published.
    expect(readFileSync(paths().inventoryCsv)).toEqual(before);
    expect(readFileSync(paths().changesCsv, 'utf8').trim().split('\n')).toHaveLength(1);
    const runs = JSON.parse((await runCli(['runs', '--json'], env)).stdout) as { status: string }[];
    expect(runs.map((run) => run.status)).toEqual(['complete', 'complete']);

    sim.mutate({ cure: [bigItem.id] });
    expect((await sync()).summary).toMatchObject({
      items: items().length,
      updated: 0,
      removed: 0,
      invalid: 0,
    });
  });
});
