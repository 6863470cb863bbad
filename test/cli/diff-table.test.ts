import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shorten } from '../../src/cli/table.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { simEnv, tempDir } from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
beforeAll(async () => {
  sim = await startSimulator({ items: 200, seed: 21 });
  temp = tempDir('shop-sync-diff-table-');
  env = simEnv(sim, temp.dir);
  expect((await runCli(['sync'], env)).code).toBe(0);
  sim.mutate({ titles: 10, add: 8, prices: 3 });
  expect((await runCli(['sync'], env)).code).toBe(0);
});
afterAll(async () => {
  await sim.close();
  temp.cleanup();
});

interface JsonChange {
  change: string;
  id: string;
  fields: string[];
  before: { title?: string } | null;
  after: { title?: string } | null;
}

/** The display column where a row's last three cells (price, quantity, published) begin. */
function priceColumn(row: string): number {
  const cell = String.raw`\S+(?: \S+)*`;
  const tail = new RegExp(`${cell} {2,}${cell} {2,}${cell}$`).exec(row)?.[0] ?? '';
  return stringWidth(row.slice(0, row.length - tail.length));
}

describe('the diff table', () => {
  it('lines up its columns by display width, with CJK and emoji titles', async () => {
    const table = (await runCli(['diff'], env)).stdout.trimEnd().split('\n');
    const [, header, ...rows] = table;
    expect(rows).toHaveLength(21);
    expect(rows.some((row) => stringWidth(row) !== [...row].length)).toBe(true);
    const expected = (header ?? '').indexOf('PRICE');
    expect(rows.map(priceColumn)).toEqual(rows.map(() => expected));
  });

  it('shows the old and the new title of a renamed item', async () => {
    const { changes } = JSON.parse((await runCli(['diff', '--format', 'json'], env)).stdout) as {
      changes: JsonChange[];
    };
    const renamed = changes.filter((c) => c.fields.includes('title'));
    expect(renamed).toHaveLength(10);
    const rows = (await runCli(['diff'], env)).stdout.split('\n');
    for (const change of renamed) {
      const row = rows.find((line) => line.startsWith(`updated  ${change.id} `));
      const cell = `${shorten(change.before?.title ?? '', 30)} -> ${shorten(change.after?.title ?? '', 30)}`;
      expect(row).toContain(cell);
    }
  });
});
