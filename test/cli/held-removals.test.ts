import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli, SYNC_JSON_KEYS } from '../helpers/cli.js';
import { type Received, Receiver } from '../helpers/receiver.js';
import { simEnv, tempDir } from '../store/fixtures.js';

/**
 * A listing that suddenly answers `[]`, or a fraction of the shop, is held: the run stays in the store
 * with status `held`, the feeds and diffs never show the removals, `sync` exits 1 with one sentence of
 * numbers, until the listing comes back or a person accepts the removals.
 */

let temp: ReturnType<typeof tempDir>;
let receiver: Receiver;

beforeEach(async () => {
  temp = tempDir('shop-sync-held-');
  receiver = await new Receiver().start();
});
afterEach(async () => {
  await receiver.stop();
  temp.cleanup();
});

const feedsOf = (dir: string) => path.join(dir, 'shop', 'feeds');
const readFeed = (dir: string, name: string) => readFileSync(path.join(feedsOf(dir), name), 'utf8');

interface RunRow {
  run: number;
  status: string;
  items: number;
  removed: number;
  error: string | null;
}

async function runsOf(env: Record<string, string>): Promise<RunRow[]> {
  const result = await runCli(['runs', '--json'], env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as RunRow[];
}

/** The ids of the changes feed's removed rows. */
function removedInChanges(dir: string): string[] {
  return readFeed(dir, 'changes.csv')
    .split('\n')
    .filter((line) => line.startsWith('removed,'))
    .map((line) => line.split(',')[1] as string);
}

describe('a shop of 2,000 whose listing empties', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ items: 2000, seed: 320 });
  });
  afterAll(() => sim.close());

  it('is held while the listing answers [], again on the next sync, and completes with nothing removed once the listing is back', async () => {
    const env = { ...simEnv(sim, temp.dir), SYNC_PER_PAGE: '200', NOTIFY_URL: receiver.url };
    const first = await runCli(['sync', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    const inventory = readFeed(temp.dir, 'inventory.csv');
    const snapshot = readFileSync(path.join(feedsOf(temp.dir), 'snapshot.sqlite'));

    const gone = sim.mutate({ remove: 2000 }).removed;
    const held = await runCli(['sync', '--json'], env);
    expect(held.code).toBe(1);
    const sentence =
      'run 2 would remove 2,000 of 2,000 items (100 %), more than SYNC_MAX_REMOVED allows by default (10 % and 10 items): held; the feeds are unchanged';
    expect(held.stderr).toContain(`shop-sync: Shop shop: ${sentence}`);
    const summary = JSON.parse(held.stdout);
    expect(Object.keys(summary)).toEqual(SYNC_JSON_KEYS);
    expect(summary).toMatchObject({ shop: 'shop', run: 2, status: 'held', items: 0, removed: 2000 });
    expect(readFeed(temp.dir, 'inventory.csv')).toBe(inventory);
    expect(readFileSync(path.join(feedsOf(temp.dir), 'snapshot.sqlite')).equals(snapshot)).toBe(true);

    const notice = receiver.received.at(-1) as Received;
    expect(notice.headers['x-shop-sync-event']).toBe('sync.held');
    expect(notice.headers['x-shop-sync-delivery']).toBe('shop:2:sync.held');
    expect(JSON.parse(notice.body)).toMatchObject({
      run: 2,
      status: 'held',
      removed: 2000,
      event: 'sync.held',
      error: expect.stringContaining(sentence),
      feeds: null,
    });

    const again = await runCli(['sync'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('run 3 would remove 2,000 of 2,000 items (100 %)');
    expect(again.stdout).toContain('Shop shop: run 3 held');

    const runs = await runsOf(env);
    expect(runs.map((r) => [r.run, r.status])).toEqual([
      [1, 'complete'],
      [2, 'held'],
      [3, 'held'],
    ]);
    expect(runs[2]?.error).toContain('run 3 would remove 2,000 of 2,000 items (100 %)');
    const table = await runCli(['runs'], env);
    expect(table.stdout).toMatch(/3 +held/);

    sim.mutate({ restore: gone });
    const back = await runCli(['sync', '--json'], env);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ run: 4, status: 'complete', items: 2000, removed: 0 });
    expect(removedInChanges(temp.dir)).toEqual([]);
    expect(readFeed(temp.dir, 'inventory.csv')).toBe(inventory);
    const diff = await runCli(['diff', '--format', 'json'], env);
    expect(JSON.parse(diff.stdout)).toMatchObject({ from: 1, to: 4, changes: [] });
  });
});

describe('a shop of 2,000 that drops to 30 %', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ items: 2000, seed: 321 });
  });
  afterAll(() => sim.close());

  it('is held, and `sync --accept-removals` lets exactly one run complete with the removals', async () => {
    const env = { ...simEnv(sim, temp.dir), SYNC_PER_PAGE: '200' };
    expect((await runCli(['sync'], env)).code).toBe(0);
    const gone = sim.mutate({ remove: 1400 }).removed;

    const held = await runCli(['sync'], env);
    expect(held.code).toBe(1);
    expect(held.stderr).toContain(
      'run 2 would remove 1,400 of 2,000 items (70 %), more than SYNC_MAX_REMOVED allows by default (10 % and 10 items): held; the feeds are unchanged',
    );
    expect(removedInChanges(temp.dir)).toEqual([]);

    const accepted = await runCli(['sync', '--accept-removals', '--json'], env);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(JSON.parse(accepted.stdout)).toMatchObject({
      run: 3,
      status: 'complete',
      items: 600,
      removed: 1400,
    });
    expect(removedInChanges(temp.dir).sort()).toEqual([...gone].sort());

    sim.mutate({ remove: 300 });
    const next = await runCli(['sync'], env);
    expect(next.code).toBe(1);
    expect(next.stderr).toContain('run 4 would remove 300 of 600 items (50 %)');
  });

  it('follows SYNC_MAX_REMOVED as a count, as a share, as none, and per shop as max_removed', async () => {
    const env = { ...simEnv(sim, temp.dir), SYNC_PER_PAGE: '200' };
    expect((await runCli(['sync'], env)).code).toBe(0);
    const listed = sim.listedIds().length;
    sim.mutate({ remove: 50 });

    const count = await runCli(['sync'], { ...env, SYNC_MAX_REMOVED: '49' });
    expect(count.code).toBe(1);
    expect(count.stderr).toContain(`run 2 would remove 50 of ${listed.toLocaleString('en-US')} items (`);
    expect(count.stderr).toContain('more than SYNC_MAX_REMOVED=49: held');
    const share = await runCli(['sync'], { ...env, SYNC_MAX_REMOVED: '1%' });
    expect(share.code).toBe(1);
    expect(share.stderr).toContain('more than SYNC_MAX_REMOVED=1%: held');

    const file = path.join(temp.dir, 'shops.yaml');
    writeFileSync(
      file,
      [
        'shops:',
        '  shop:',
        `    base_url: ${sim.baseUrl}`,
        `    client_id: ${sim.credentials.clientId}`,
        `    client_secret: ${sim.credentials.clientSecret}`,
        `    username: ${sim.credentials.username}`,
        `    password: ${sim.credentials.password}`,
        '    per_page: 200',
        '    max_removed: 2%',
        '',
      ].join('\n'),
    );
    const fromFile = { DATA_DIR: temp.dir, SHOP_SYNC_CONFIG: file, LOG_LEVEL: 'silent' };
    const perShop = await runCli(['sync', '--shop', 'shop'], fromFile);
    expect(perShop.code).toBe(1);
    expect(perShop.stderr).toContain('more than SYNC_MAX_REMOVED=2%: held');

    const none = await runCli(['sync', '--json'], { ...env, SYNC_MAX_REMOVED: 'none' });
    expect(none.code, none.stderr).toBe(0);
    expect(JSON.parse(none.stdout)).toMatchObject({ status: 'complete', removed: 50 });
  });

  it('refuses a SYNC_MAX_REMOVED that is neither a count, a share nor none, as a setting', async () => {
    const env = { ...simEnv(sim, temp.dir), SYNC_MAX_REMOVED: 'ten' };
    const result = await runCli(['sync'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('SYNC_MAX_REMOVED');
    expect(result.stderr).toContain('a number of items (500), a share of the shop (10%) or none');
  });
});

describe('a small shop', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ items: 20, seed: 322 });
  });
  afterAll(() => sim.close());

  it('removing 8 of 20 completes: a share alone would hold every small shop', async () => {
    const env = simEnv(sim, temp.dir);
    expect((await runCli(['sync'], env)).code).toBe(0);
    const gone = sim.mutate({ remove: 8 }).removed;
    const result = await runCli(['sync', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'complete', items: 12, removed: 8 });
    expect(removedInChanges(temp.dir).sort()).toEqual([...gone].sort());
  });
});
