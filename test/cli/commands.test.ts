import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli, SYNC_JSON_KEYS } from '../helpers/cli.js';
import { simulatorShopLines } from '../helpers/config-files.js';
import { simEnv, tempDir } from '../store/fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
beforeAll(async () => {
  sim = await startSimulator({ items: 150, seed: 5 });
});
afterAll(() => sim.close());
beforeEach(() => {
  temp = tempDir('shop-sync-commands-');
});
afterEach(() => temp.cleanup());

/** A config file of two shops on the simulator: `good`, and `broken` whose password file is missing. */
function twoShops(broken: 'missing-secret' | 'wrong-password'): string {
  const { clientId, clientSecret, username, password } = sim.credentials;
  writeFileSync(path.join(temp.dir, 'good-password'), `${password}\n`);
  const shop = (name: string, passwordLine: string) =>
    [
      `  ${name}:`,
      `    base_url: ${sim.baseUrl}`,
      `    client_id: ${clientId}`,
      `    client_secret: ${clientSecret}`,
      `    username: ${username}`,
      `    ${passwordLine}`,
    ].join('\n');
  const file = path.join(temp.dir, 'shops.yaml');
  const brokenPassword =
    broken === 'missing-secret' ? 'password_file: secrets/broken-password' : 'password: not-the-password';
  // Relative paths: against the file's folder, wherever the command runs.
  const text = [
    'data_dir: stores',
    'shops:',
    shop('good', 'password_file: good-password'),
    shop('broken', brokenPassword),
  ];
  writeFileSync(file, `${text.join('\n')}\n`);
  return file;
}

const json = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('shop-sync --version and --help', () => {
  it('prints the package version', async () => {
    const result = await runCli(['--version'], {}, temp.dir);
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('gives every command an example, and sync the environment it needs and the page-size cap', async () => {
    const commands = [
      'sync',
      'check',
      'runs',
      'diff',
      'prune',
      'export',
      'worker',
      'trigger',
      'demo',
      'simulate',
    ];
    const helps = await Promise.all(
      ['', ...commands].map((c) => runCli([c, '--help'].filter(Boolean), {}, temp.dir)),
    );
    for (const help of helps) {
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/\nExample:\n {2}\$ /);
    }
    const sync = (await runCli(['sync', '--help'], {}, temp.dir)).stdout;
    for (const name of [
      'MARKETPLACE_BASE_URL',
      'MARKETPLACE_CLIENT_SECRET',
      'MARKETPLACE_PASSWORD',
      'DATA_DIR',
    ]) {
      expect(sync).toContain(name);
    }
    expect(sync).toContain('1 to 1000');
  });
});

describe('settings a user gets wrong', () => {
  it('are usage errors (exit 2) naming the setting', async () => {
    const perPage = await runCli(['sync', '--per-page', '99999999'], simEnv(sim, temp.dir), temp.dir);
    expect(perPage.code).toBe(2);
    expect(perPage.stderr).toContain(
      "option '--per-page <n>' argument '99999999' is invalid. expected a whole number from 1 to 1000.",
    );
    const longName = await runCli(['runs'], { SHOP_NAME: 'x'.repeat(300) }, temp.dir);
    expect(longName.code).toBe(2);
    expect(longName.stderr).toMatch(
      /^shop-sync: SHOP_NAME="x{40}…" is invalid: .*at most 64 characters\.\n$/,
    );
    const gzip = await runCli(['runs'], { FEEDS_GZIP: 'yes' }, temp.dir);
    expect(gzip).toMatchObject({
      code: 2,
      stderr: 'shop-sync: FEEDS_GZIP="yes" is invalid: expected one of 1, 0, true, false.\n',
    });
    expect(existsSync(path.join(temp.dir, 'data'))).toBe(false);
  });

  it('do not stop commands about another shop: a missing secret file matters only to its shop', async () => {
    const config = twoShops('missing-secret');
    const runs = await runCli(['runs', '--shop', 'good'], { SHOP_SYNC_CONFIG: config }, '/');
    expect(runs).toMatchObject({ code: 0, stderr: '' });
    expect(runs.stdout).toBe(
      `Shop good has no runs yet (no store in DATA_DIR ${path.join(temp.dir, 'stores')}).\n`,
    );
    const prune = await runCli(['prune', '--shop', 'good', '--keep', '1'], { SHOP_SYNC_CONFIG: config }, '/');
    expect(prune.stdout).toBe(
      `Shop good has no runs yet (no store in DATA_DIR ${path.join(temp.dir, 'stores')}): nothing to prune.\n`,
    );
    const sync = await runCli(
      ['sync', '--shop', 'broken'],
      { SHOP_SYNC_CONFIG: config, LOG_LEVEL: 'silent' },
      '/',
    );
    expect(sync.code).toBe(2);
    expect(sync.stderr).toBe(
      `shop-sync: shops.broken.password_file names ${path.join(temp.dir, 'secrets/broken-password')}, which cannot be read (ENOENT).\n`,
    );
  });
});

describe('shop-sync check', () => {
  it('logs in, reads the first page, reports the page size really served, and writes nothing', async () => {
    const env = { ...simEnv(sim, temp.dir), SYNC_PER_PAGE: '500' };
    const text = await runCli(['check'], env, temp.dir);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toBe(
      `Shop shop: OK: logged in at ${sim.baseUrl}; the first page has 100 items (asked for 500: the server serves at most 100 a page, or the shop has no more); no store yet (the first sync makes it).\n`,
    );
    const asJson = await runCli(['check', '--json'], env, temp.dir);
    expect(json(asJson.stdout)).toEqual([
      {
        shop: 'shop',
        ok: true,
        base_url: sim.baseUrl,
        per_page: 500,
        page_size: 100,
        store: 'none',
        error: null,
      },
    ]);
    expect(existsSync(path.join(temp.dir, 'shop'))).toBe(false);
  });

  it('exits 1 with the reason when the marketplace refuses the login', async () => {
    const env = { ...simEnv(sim, temp.dir), MARKETPLACE_PASSWORD: 'wrong' };
    const result = await runCli(['check', '--json'], env, temp.dir);
    expect(result.code).toBe(1);
    const [line] = json(result.stdout);
    expect(line).toMatchObject({ shop: 'shop', ok: false, page_size: null });
    expect(String(line?.error)).toMatch(/MARKETPLACE_PASSWORD|rejected|refused/i);
    expect(result.stderr).toContain(String(line?.error));
    expect(result.stdout + result.stderr).not.toContain('wrong');
  });

  it('--all checks every shop, one line each, and exits 1 if any failed', async () => {
    const config = twoShops('wrong-password');
    const result = await runCli(
      ['check', '--all', '--json'],
      { SHOP_SYNC_CONFIG: config, LOG_LEVEL: 'silent' },
      '/',
    );
    expect(result.code).toBe(1);
    const lines = json(result.stdout);
    expect(lines.map((l) => [l.shop, l.ok])).toEqual([
      ['good', true],
      ['broken', false],
    ]);
    // The rejected login is named by the settings as the file spells them.
    expect(lines[1]?.error).toContain('(shops.broken.username / shops.broken.password)');
    expect(result.stderr).toBe('shop-sync: 1 of 2 shops failed: broken.\n');
  });
});

describe('shop-sync sync --all', () => {
  it('syncs every configured shop with a summary each, and exits 1 if any failed', async () => {
    const config = twoShops('missing-secret');
    const env = { SHOP_SYNC_CONFIG: config, LOG_LEVEL: 'silent' };
    const result = await runCli(['sync', '--all', '--json'], env, '/');
    expect(result.code).toBe(1);
    const [good, broken] = json(result.stdout);
    expect(Object.keys(good ?? {})).toEqual(SYNC_JSON_KEYS);
    expect(good).toMatchObject({ shop: 'good', status: 'complete', items: 150 });
    expect(broken).toMatchObject({ shop: 'broken', status: 'failed' });
    expect(String(broken?.error)).toContain('shops.broken.password_file names');
    expect(result.stderr).toContain('shop-sync: 1 of 2 shops failed: broken.\n');
    expect(existsSync(path.join(temp.dir, 'stores/good/feeds/inventory.csv'))).toBe(true);

    const text = await runCli(['sync', '--all', '--shop', 'good'], env, '/');
    expect(text.code).toBe(2);
    expect(text.stderr).toContain("option '--shop <name>' cannot be used with option '--all'");
  });

  it('syncs the shops over the same connections to the marketplace', async () => {
    const shops = ['north', 'east', 'south', 'west'];
    const lines = shops.flatMap((name) => simulatorShopLines(sim, name));
    const file = path.join(temp.dir, 'four.yaml');
    writeFileSync(file, [`data_dir: ${temp.dir}`, 'shops:', ...lines].join('\n'));
    const before = sim.stats().connections;
    // One request in flight at a time and one connection more for a login: a pool of 2 connections.
    const env = { SHOP_SYNC_CONFIG: file, SYNC_MAX_IN_FLIGHT: '1', LOG_LEVEL: 'silent' };
    const result = await runCli(['sync', '--all', '--json'], env, '/');
    expect(result.code).toBe(0);
    expect(json(result.stdout).map((line) => [line.shop, line.status])).toEqual(
      shops.map((shop) => [shop, 'complete']),
    );
    // A sync that opened connections of its own would have opened at least one each.
    expect(sim.stats().connections - before).toBeLessThanOrEqual(2);
  });
});
