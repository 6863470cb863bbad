import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findShop, loadConfig, requireConnection } from '../src/config.js';
import { ConfigError } from '../src/errors.js';

const dir = mkdtempSync(path.join(tmpdir(), 'shop-sync-config-'));

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const connection = {
  MARKETPLACE_BASE_URL: 'https://api.example.test/',
  MARKETPLACE_CLIENT_ID: 'cid',
  MARKETPLACE_CLIENT_SECRET: 'csecret',
  MARKETPLACE_USERNAME: 'owner',
  MARKETPLACE_PASSWORD: 'pw',
};

describe('loadConfig', () => {
  it('configures one shop from the environment with the documented defaults', () => {
    const config = loadConfig(connection, dir);
    const shop = findShop(config, undefined);
    expect(config.dataDir).toBe(path.join(dir, 'data'));
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(config.logLevel).toBe('info');
    expect(config.retryBudgetSeconds).toBe(120);
    expect(shop).toMatchObject({
      name: 'default',
      baseUrl: 'https://api.example.test',
      perPage: 100,
      schedule: '*/15 * * * *',
    });
    expect(requireConnection(shop).password).toBe('pw');
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(shop)).toBe(true);
  });

  it('reads several shops from a YAML file and lets the environment win', () => {
    const secret = file('secret.txt', 'from-file\n');
    const yaml = file(
      'shops.yaml',
      [
        'data_dir: /srv/data',
        'shops:',
        '  north:',
        '    base_url: https://north.example.test',
        '    client_id: n-id',
        `    client_secret_file: ${secret}`,
        '    per_page: 50',
        '  south:',
        '    base_url: https://south.example.test',
      ].join('\n'),
    );
    const config = loadConfig(
      { SHOP_SYNC_CONFIG: yaml, SHOP_NAME: 'north', MARKETPLACE_CLIENT_ID: 'env-id', DATA_DIR: '/env/data' },
      dir,
    );
    expect(config.dataDir).toBe('/env/data');
    expect(Object.keys(config.shops).sort()).toEqual(['north', 'south']);
    expect(findShop(config, 'north')).toMatchObject({
      clientId: 'env-id',
      clientSecret: 'from-file',
      perPage: 50,
    });
    expect(findShop(config, 'south').clientId).toBeUndefined();
  });

  it('reads a secret from NAME_FILE', () => {
    const secret = file('pw.txt', 's3cret\n');
    const config = loadConfig(
      { ...connection, MARKETPLACE_PASSWORD: '', MARKETPLACE_PASSWORD_FILE: secret },
      dir,
    );
    expect(findShop(config, undefined).password).toBe('s3cret');
  });

  it('names the setting at fault', () => {
    expect(configError(() => loadConfig({ SYNC_PER_PAGE: 'many' }, dir)).setting).toBe('SYNC_PER_PAGE');
    expect(configError(() => loadConfig({ LOG_LEVEL: 'loud' }, dir)).setting).toBe('LOG_LEVEL');
    expect(configError(() => loadConfig({ SYNC_RETRY_BUDGET_SECONDS: '0' }, dir)).setting).toBe(
      'SYNC_RETRY_BUDGET_SECONDS',
    );
    expect(configError(() => loadConfig({ SHOP_NAME: 'a shop' }, dir)).setting).toBe('SHOP_NAME');
    expect(configError(() => loadConfig({ MARKETPLACE_PASSWORD_FILE: '/nonexistent/pw' }, dir)).message).toBe(
      'MARKETPLACE_PASSWORD_FILE names /nonexistent/pw, which cannot be read (ENOENT).',
    );
    expect(configError(() => loadConfig({ SHOP_SYNC_CONFIG: 'missing.yaml' }, dir)).setting).toBe(
      'SHOP_SYNC_CONFIG',
    );
    const bad = file('bad.yaml', 'shops:\n  north:\n    per_page: -3\n');
    expect(configError(() => loadConfig({ SHOP_SYNC_CONFIG: bad }, dir)).setting).toBe(
      'shops.north.per_page',
    );
    const unknown = file('unknown.yaml', 'shops:\n  north:\n    base_ur1: https://x.test\n');
    expect(configError(() => loadConfig({ SHOP_SYNC_CONFIG: unknown }, dir)).message).toContain('base_ur1');
  });

  it('refuses a schedule that is not a cron pattern, naming where it came from', () => {
    expect(configError(() => loadConfig({ SYNC_SCHEDULE: 'every tuesday' }, dir)).message).toMatch(
      /^SYNC_SCHEDULE "every tuesday" is not a valid cron pattern: .+\.$/,
    );
    const yaml = file('cron.yaml', 'shops:\n  north:\n    schedule: "61 * * * *"\n');
    expect(configError(() => loadConfig({ SHOP_SYNC_CONFIG: yaml }, dir)).setting).toBe(
      'shops.north.schedule',
    );
    expect(findShop(loadConfig({ SYNC_SCHEDULE: '0 3 * * 1-5' }, dir), undefined).schedule).toBe(
      '0 3 * * 1-5',
    );
  });

  it('refuses an empty secret file and a Redis URL that is not one, without echoing the URL', () => {
    expect(configError(() => loadConfig({ REDIS_URL: 'redis//:s3cret@host' }, dir)).message).toBe(
      'REDIS_URL is not a redis:// or rediss:// URL.',
    );
    const empty = file('empty-secret.txt', '\n');
    expect(configError(() => loadConfig({ MARKETPLACE_PASSWORD_FILE: empty }, dir)).message).toBe(
      `MARKETPLACE_PASSWORD_FILE names ${empty}, which is empty.`,
    );
  });

  it('refuses a plain-http base URL unless it is loopback or explicitly allowed', () => {
    const error = configError(() => loadConfig({ MARKETPLACE_BASE_URL: 'http://api.example.test' }, dir));
    expect(error.setting).toBe('MARKETPLACE_BASE_URL');
    expect(error.message).toContain('MARKETPLACE_ALLOW_INSECURE=1');
    for (const url of ['http://127.0.0.1:4010', 'http://localhost:4010', 'http://[::1]:4010']) {
      expect(findShop(loadConfig({ MARKETPLACE_BASE_URL: url }, dir), undefined).baseUrl).toBe(url);
    }
    const allowed = loadConfig(
      { MARKETPLACE_BASE_URL: 'http://api.example.test', MARKETPLACE_ALLOW_INSECURE: '1' },
      dir,
    );
    expect(findShop(allowed, undefined).allowInsecure).toBe(true);
    expect(configError(() => loadConfig({ MARKETPLACE_BASE_URL: 'ftp://x.test' }, dir)).setting).toBe(
      'MARKETPLACE_BASE_URL',
    );
  });

  it('says which connection setting a sync still needs', () => {
    const shop = findShop(loadConfig({ MARKETPLACE_BASE_URL: 'https://x.test' }, dir), undefined);
    const error = configError(() => requireConnection(shop));
    expect(error.setting).toBe('MARKETPLACE_CLIENT_ID');
    expect(error.message).toBe('MARKETPLACE_CLIENT_ID is not set for shop "default": a sync needs it.');
  });

  it('lists the configured shops when asked for an unknown one', () => {
    expect(configError(() => findShop(loadConfig(connection, dir), 'nope')).message).toBe(
      'Shop "nope" is not configured (configured shops: default).',
    );
  });
});
