import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_MUTATION, runDemo } from '../src/cli/demo-shop.js';
import { loadConfig } from '../src/config/app-config.js';
import { silentLogger } from '../src/log.js';
import { readCsvRecords } from './export/python.js';
import { runCli } from './helpers/cli.js';
import { diffAsTruth, sortedTruth, tempDir } from './store/fixtures.js';

let temp: ReturnType<typeof tempDir>;
beforeEach(() => {
  temp = tempDir('shop-sync-demo-');
});
afterEach(() => temp.cleanup());

describe('runDemo', () => {
  it('reports exactly the changes it made to the simulator', async () => {
    const config = loadConfig({ DATA_DIR: temp.dir });
    const result = await runDemo({ items: 60, seed: 4, config, log: silentLogger() });

    expect(result.first).toMatchObject({ run: 1, items: 60, added: 60 });
    expect(result.mutation.added).toHaveLength(DEMO_MUTATION.add ?? 0);
    expect(result.mutation.removed).toHaveLength(DEMO_MUTATION.remove ?? 0);
    expect(diffAsTruth(result.changes)).toEqual(sortedTruth(result.mutation));
    expect(readdirSync(result.paths.dir).sort()).toContain('.shop-sync-demo');
    expect(readdirSync(result.paths.feedsDir).sort()).toEqual([
      'changes.csv',
      'inventory.csv',
      'snapshot.sqlite',
    ]);
    expect(readCsvRecords(result.paths.changesCsv).map((r) => r.id)).toEqual(result.changes.map((c) => c.id));
  });
});

describe('shop-sync demo', () => {
  it('runs end to end, again and again, and says where the files are', async () => {
    const env = { DATA_DIR: temp.dir };
    const first = await runCli(['demo', '--items', '80'], env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const feeds = path.join(temp.dir, 'demo', 'feeds');
    expect(first.stdout).toContain('Changes from run 1 to run 2: 3 added,');
    expect(first.stdout).toContain(`  inventory  ${path.join(feeds, 'inventory.csv')}\n`);

    const second = await runCli(['demo', '--items', '80'], env);
    expect(second.code).toBe(0);
    const changesPart = (stdout: string) => stdout.slice(stdout.indexOf('Changes from run 1 to run 2'));
    expect(changesPart(second.stdout)).toBe(changesPart(first.stdout));
    for (const secret of ['demo-secret', 'demo-password']) expect(second.stdout).not.toContain(secret);
  });

  it('leaves alone a demo directory it did not make', async () => {
    const shopDir = path.join(temp.dir, 'demo');
    mkdirSync(shopDir);
    writeFileSync(path.join(shopDir, 'inventory.sqlite'), 'not the demo’s');
    const result = await runCli(['demo'], { DATA_DIR: temp.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `shop-sync: ${shopDir} exists and was not made by the demo, which would replace it: give the demo another --data-dir.\n`,
    );
    expect(readFileSync(path.join(shopDir, 'inventory.sqlite'), 'utf8')).toBe('not the demo’s');
  });

  it('refuses a catalogue too small for its changes', async () => {
    const result = await runCli(['demo', '--items', '10'], { DATA_DIR: temp.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "option '--items <n>' argument '10' is invalid. expected a whole number of at least 50.",
    );
  });
});
