import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  findShop,
  loadConfig,
  readSecret,
  requireConnection,
  type SecretSetting,
} from '../../src/config/app-config.js';
import { configError, configFolder } from '../helpers/config-files.js';

const { dir, file } = configFolder('shop-sync-config-');

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
        '    username: n-owner',
        '    password: n-password',
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
    expect(findShop(config, 'north').perPage).toBe(50);
    expect(requireConnection(findShop(config, 'north'))).toMatchObject({
      clientId: 'env-id',
      clientSecret: 'from-file',
    });
    expect(configError(() => requireConnection(findShop(config, 'south'))).message).toBe(
      'shops.south.client_id is not set for shop "south": a sync needs it.',
    );
  });

  it('reads a secret from NAME_FILE', () => {
    const secret = file('pw.txt', 's3cret\n');
    const config = loadConfig(
      { ...connection, MARKETPLACE_PASSWORD: '', MARKETPLACE_PASSWORD_FILE: secret },
      dir,
    );
    expect(requireConnection(findShop(config, undefined)).password).toBe('s3cret');
  });

  it('names the setting at fault', () => {
    expect(configError(() => loadConfig({ SYNC_PER_PAGE: 'many' }, dir)).setting).toBe('SYNC_PER_PAGE');
    expect(configError(() => loadConfig({ LOG_LEVEL: 'loud' }, dir)).setting).toBe('LOG_LEVEL');
    expect(configError(() => loadConfig({ SYNC_RETRY_BUDGET_SECONDS: '0' }, dir)).setting).toBe(
      'SYNC_RETRY_BUDGET_SECONDS',
    );
    expect(configError(() => loadConfig({ SHOP_NAME: 'a shop' }, dir)).setting).toBe('SHOP_NAME');
    const unreadable = findShop(
      loadConfig(
        { ...connection, MARKETPLACE_PASSWORD_FILE: '/nonexistent/pw', MARKETPLACE_PASSWORD: '' },
        dir,
      ),
      undefined,
    );
    expect(configError(() => requireConnection(unreadable)).message).toBe(
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
    expect(configError(() => loadConfig({ SYNC_SCHEDULE: 'every tuesday' }, dir)).message).toBe(
      'SYNC_SCHEDULE="every tuesday" is invalid: expected a cron pattern such as */15 * * * *; it has 2 fields where 5 (or 6, with seconds first) are expected.',
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
      'REDIS_URL is invalid: expected a redis:// or rediss:// URL.',
    );
    const empty = file('empty-secret.txt', '\n');
    const shop = findShop(
      loadConfig({ ...connection, MARKETPLACE_PASSWORD: '', MARKETPLACE_PASSWORD_FILE: empty }, dir),
      undefined,
    );
    expect(configError(() => requireConnection(shop)).message).toBe(
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

describe('settings added for the terminal and the worker', () => {
  it('have documented defaults and are validated, naming the setting', () => {
    const config = loadConfig({}, dir);
    expect(config).toMatchObject({
      maxInFlight: 8,
      shutdownGraceSeconds: 20,
      opsPort: 9464,
      logFormat: 'json',
    });
    expect(loadConfig({}, dir, { stderrIsTerminal: true }).logFormat).toBe('pretty');
    expect(loadConfig({ LOG_FORMAT: 'json' }, dir, { stderrIsTerminal: true }).logFormat).toBe('json');
    expect(loadConfig({ OPS_PORT: '0', SYNC_MAX_IN_FLIGHT: '2' }, dir)).toMatchObject({
      opsPort: 0,
      maxInFlight: 2,
    });
    for (const [name, value] of [
      ['LOG_FORMAT', 'fancy'],
      ['SYNC_MAX_IN_FLIGHT', '0'],
      ['SYNC_MAX_IN_FLIGHT', '65'],
      ['OPS_PORT', '70000'],
      ['SHUTDOWN_GRACE_SECONDS', '-1'],
      ['SYNC_PER_PAGE', '99999999'],
    ] as const) {
      const error = configError(() => loadConfig({ [name]: value }, dir));
      expect(error.setting).toBe(name);
      expect(error.message).toContain(`${name}="${value}" is invalid`);
    }
    const yaml = file(
      'new-keys.yaml',
      'log_format: pretty\nmax_in_flight: 3\nshutdown_grace_seconds: 5\nops_port: 0\n',
    );
    expect(loadConfig({ SHOP_SYNC_CONFIG: yaml }, dir)).toMatchObject({
      logFormat: 'pretty',
      maxInFlight: 3,
      shutdownGraceSeconds: 5,
      opsPort: 0,
    });
  });

  it('accept only the documented on/off values', () => {
    expect(loadConfig({ FEEDS_GZIP: 'true' }, dir).feedsGzip).toBe(true);
    expect(loadConfig({ FEEDS_GZIP: '0' }, dir).feedsGzip).toBe(false);
    expect(configError(() => loadConfig({ FEEDS_GZIP: 'yes' }, dir)).message).toBe(
      'FEEDS_GZIP="yes" is invalid: expected one of 1, 0, true, false.',
    );
  });

  it('refuse a shop name too long to be a directory, naming SHOP_NAME', () => {
    const error = configError(() => loadConfig({ SHOP_NAME: 'x'.repeat(300) }, dir));
    expect(error.setting).toBe('SHOP_NAME');
    expect(error.message).toBe(
      `SHOP_NAME="${'x'.repeat(40)}…" is invalid: expected letters, digits, - and _ only, at most 64 characters.`,
    );
  });
});

describe('several shops in a file', () => {
  it("read a shop's secrets only when that shop is used", () => {
    const yaml = file(
      'lazy.yaml',
      [
        'shops:',
        '  small:',
        '    base_url: https://small.example.test',
        '    client_id: s',
        '    client_secret: s',
        '    username: s',
        '    password: s',
        '  big:',
        '    base_url: https://big.example.test',
        '    client_id: b',
        '    client_secret_file: missing-secret',
        '    username: b',
        '    password_file: /nonexistent/big-password',
      ].join('\n'),
    );
    const config = loadConfig({ SHOP_SYNC_CONFIG: yaml }, '/');
    expect(requireConnection(findShop(config, 'small')).password).toBe('s');
    const error = configError(() => requireConnection(findShop(config, 'big')));
    expect(error.setting).toBe('shops.big.client_secret_file');
    // Relative to the file's folder, not the working directory.
    expect(error.message).toBe(
      `shops.big.client_secret_file names ${path.join(dir, 'missing-secret')}, which cannot be read (ENOENT).`,
    );
  });

  it('name every connection setting as written, for messages about it', () => {
    const secret = file('north-password', 'pw\n');
    const yaml = file(
      'names.yaml',
      `shops:\n  north-store:\n    base_url: https://n.example.test\n    client_id: n\n    client_secret: c\n    username: u\n    password_file: ${secret}\n`,
    );
    const north = requireConnection(findShop(loadConfig({ SHOP_SYNC_CONFIG: yaml }, dir), 'north-store'));
    expect(north.settingNames).toEqual({
      baseUrl: 'shops.north-store.base_url',
      clientId: 'shops.north-store.client_id',
      clientSecret: 'shops.north-store.client_secret',
      username: 'shops.north-store.username',
      password: 'shops.north-store.password_file',
    });
    expect(requireConnection(findShop(loadConfig(connection, dir), undefined)).settingNames).toEqual({
      baseUrl: 'MARKETPLACE_BASE_URL',
      clientId: 'MARKETPLACE_CLIENT_ID',
      clientSecret: 'MARKETPLACE_CLIENT_SECRET',
      username: 'MARKETPLACE_USERNAME',
      password: 'MARKETPLACE_PASSWORD',
    });
  });

  it('name a bad base URL by its key in the file, without rewriting the message', () => {
    const yaml = file('http.yaml', 'shops:\n  north:\n    base_url: http://api.example.test\n');
    const error = configError(() => loadConfig({ SHOP_SYNC_CONFIG: yaml }, dir));
    expect(error.setting).toBe('shops.north.base_url');
    expect(error.message).toBe(
      'shops.north.base_url must use https: (got http://api.example.test); set shops.north.allow_insecure: true to allow clear text',
    );
  });

  it("validate the listing filters when the configuration loads, with the client's rules", () => {
    const yaml = file('filters.yaml', 'shops:\n  south:\n    filters:\n      shipping_to: italy\n');
    const error = configError(() => loadConfig({ SHOP_SYNC_CONFIG: yaml }, dir));
    expect(error.setting).toBe('shops.south.filters.shipping_to');
    expect(error.message).toBe(
      `${yaml}: setting "shops.south.filters.shipping_to" is invalid: must be two uppercase letters such as IT.`,
    );
    const unknown = file('filters2.yaml', 'shops:\n  south:\n    filters:\n      colour: red\n');
    expect(configError(() => loadConfig({ SHOP_SYNC_CONFIG: unknown }, dir)).message).toContain('colour');
  });

  it("resolve data_dir against the file's folder; DATA_DIR against the working directory", () => {
    const yaml = file('paths.yaml', 'data_dir: stores\n');
    expect(loadConfig({ SHOP_SYNC_CONFIG: yaml }, '/').dataDir).toBe(path.join(dir, 'stores'));
    expect(loadConfig({ SHOP_SYNC_CONFIG: yaml, DATA_DIR: 'here' }, '/tmp').dataDir).toBe('/tmp/here');
  });
});

describe('the ops port and notification settings', () => {
  it('bind loopback and ask no login by default; a login needs both halves', () => {
    expect(loadConfig({}, dir)).toMatchObject({
      opsHost: '127.0.0.1',
      opsLogin: null,
      notifySecret: undefined,
    });
    expect(loadConfig({ SHOP_SYNC_CONFIG: file('host.yaml', 'ops_host: "::"\n') }, dir).opsHost).toBe('::');
    expect(
      loadConfig({ OPS_HOST: '0.0.0.0', SHOP_SYNC_CONFIG: file('host2.yaml', 'ops_host: "::"\n') }, dir)
        .opsHost,
    ).toBe('0.0.0.0');
    const login = loadConfig({ OPS_USERNAME: 'prom', OPS_PASSWORD_FILE: 'ops-password' }, dir).opsLogin;
    expect(login?.username).toBe('prom');
    expect(login?.password).toEqual({
      setting: 'OPS_PASSWORD_FILE',
      source: { file: path.join(dir, 'ops-password') },
    });
    writeFileSync(path.join(dir, 'ops-password'), 's3cret\n');
    expect(readSecret(login?.password as SecretSetting)).toBe('s3cret');
    expect(configError(() => loadConfig({ OPS_USERNAME: 'prom' }, dir)).setting).toBe('OPS_PASSWORD');
    expect(configError(() => loadConfig({ OPS_PASSWORD: 'x' }, dir)).setting).toBe('OPS_USERNAME');
    expect(configError(() => loadConfig({ OPS_USERNAME: 'a:b', OPS_PASSWORD: 'x' }, dir)).message).toContain(
      'must not contain ":"',
    );
  });

  it('take NOTIFY_URL over each shop’s notify_url over the file’s, and refuse what is not http(s) without echoing it', () => {
    const yaml = file(
      'notify.yaml',
      'notify_url: https://all.example/hook\nshops:\n  north: {}\n  south:\n    notify_url: http://south.example/hook\n',
    );
    const config = loadConfig({ SHOP_SYNC_CONFIG: yaml }, dir);
    expect(config.shops.north?.notifyUrl).toBe('https://all.example/hook');
    expect(config.shops.south?.notifyUrl).toBe('http://south.example/hook');
    const overridden = loadConfig({ SHOP_SYNC_CONFIG: yaml, NOTIFY_URL: 'https://env.example/h' }, dir);
    expect(overridden.shops.south?.notifyUrl).toBe('https://env.example/h');
    expect(loadConfig({}, dir).shops.default?.notifyUrl).toBeUndefined();
    const bad = configError(() => loadConfig({ NOTIFY_URL: 'https://u:hunter2@x.example/' }, dir));
    expect(bad.setting).toBe('NOTIFY_URL');
    expect(bad.message).not.toContain('hunter2');
    expect(configError(() => loadConfig({ NOTIFY_URL: 'file:///etc/passwd' }, dir)).message).toBe(
      'NOTIFY_URL is invalid: expected an http:// or https:// URL.',
    );
    expect(loadConfig({ NOTIFY_SECRET_FILE: 'n' }, dir).notifySecret).toEqual({
      setting: 'NOTIFY_SECRET_FILE',
      source: { file: path.join(dir, 'n') },
    });
  });
});
