import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { findShop, loadConfig, requireConnection } from '../../src/config/app-config.js';
import { SETTINGS } from '../../src/config/settings.js';

it('the bundled example config loads both shops once its secret files exist', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'shop-sync-example-'));
  for (const name of ['north_client_secret', 'north_password', 'south_client_secret', 'south_password']) {
    writeFileSync(path.join(dir, name), `${name}-value\n`);
  }
  const text = readFileSync('config/shops.example.yaml', 'utf8').replaceAll('/run/secrets/', `${dir}/`);
  const file = path.join(dir, 'shops.yaml');
  writeFileSync(file, text);

  const config = loadConfig({ SHOP_SYNC_CONFIG: file });
  expect(config).toMatchObject({
    dataDir: '/data',
    keepRuns: 30,
    resumeWindowMinutes: 60,
    feedsGzip: false,
    logFormat: 'json',
    maxInFlight: 8,
    shutdownGraceSeconds: 20,
    opsPort: 9464,
  });
  expect(findShop(config, 'north-store').perPage).toBe(100);
  expect(requireConnection(findShop(config, 'north-store')).password).toBe('north_password-value');
  expect(findShop(config, 'south-store')).toMatchObject({
    order: 'title',
    locale: 'it',
    filters: { shipping_to: 'IT' },
  });
});

it('the bundled example config loads without its secret files; only a shop in use needs them', () => {
  const config = loadConfig({ SHOP_SYNC_CONFIG: 'config/shops.example.yaml' });
  expect(Object.keys(config.shops)).toEqual(['north-store', 'south-store']);
  expect(() => requireConnection(findShop(config, 'south-store'))).toThrow(
    'shops.south-store.client_secret_file names /run/secrets/south_client_secret, which cannot be read (ENOENT).',
  );
});

/**
 * The example's comments name each key's variable and, where they give one, its default: both come from
 * the settings table, so a setting renamed or given a new default fails here until the example says so.
 */
it("the example's comments name each key's variable and default as the settings table declares them", () => {
  const commented = readFileSync('config/shops.example.yaml', 'utf8')
    .split('\n')
    .map((line) => /^\s*([a-z_]+): .*? # ([A-Z_]+)(.*)$/.exec(line))
    .filter((match) => match !== null);
  expect(commented.length).toBeGreaterThan(10);
  for (const [, key, variable, rest] of commented) {
    const row = SETTINGS.find((setting) => setting.fileKey === key);
    expect(row?.env, `the setting of file key ${key}`).toBe(variable);
    const stated = /default (.*?)(?:;|$)/.exec(rest as string)?.[1];
    if (stated === undefined || row === undefined) continue;
    const declared = row.shownDefault ?? String(row.default);
    expect(stated, `the default of ${key}`).toBe(declared.replaceAll('`', ''));
  }
});

it('every variable the example names is a setting', () => {
  const variables = new Set(SETTINGS.flatMap((setting) => (setting.env === undefined ? [] : [setting.env])));
  const named = readFileSync('config/shops.example.yaml', 'utf8').match(/\b[A-Z][A-Z_]*_[A-Z_]+\b/g) ?? [];
  expect(named.length).toBeGreaterThan(10);
  expect(named.filter((name) => !variables.has(name))).toEqual([]);
});
