import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  findShop,
  loadConfig,
  readSecret,
  requireConnection,
  type SecretSetting,
} from '../../src/config/app-config.js';
import { SETTINGS } from '../../src/config/settings.js';
import { ConfigError } from '../../src/errors.js';
import { configError, configFolder } from '../helpers/config-files.js';

const { dir, file } = configFolder('shop-sync-config-problems-');

/** What zod, YAML-to-object checks and JavaScript say in their own words: never shown to a user. */
const LIBRARY_WORDS =
  /received|Invalid input|Invalid key|Too small|Too big|Unrecognized|NaN|undefined|\[object/;

describe('configuration problems', () => {
  it('are listed all at once, each naming the setting as written', () => {
    const yaml = file(
      'many.yaml',
      ['max_in_flight: 0', 'shops:', '  north:', '    per_page: lots', '    schedule: "* *"'].join('\n'),
    );
    const error = configError(() =>
      loadConfig({ SHOP_SYNC_CONFIG: yaml, LOG_LEVEL: 'loud', OPS_PORT: '-1', FEEDS_GZIP: 'yes' }, dir),
    );
    expect(error.setting).toBe('max_in_flight');
    expect(error.message).toBe(
      [
        'The configuration has 6 problems:',
        `  - ${yaml}: setting "max_in_flight" is invalid: expected a whole number from 1 to 64.`,
        `  - ${yaml}: setting "shops.north.per_page" is invalid: expected a whole number from 1 to 1000.`,
        `  - ${yaml}: setting "shops.north.schedule" is invalid: expected a cron pattern such as */15 * * * *; it has 2 fields where 5 (or 6, with seconds first) are expected.`,
        '  - FEEDS_GZIP="yes" is invalid: expected one of 1, 0, true, false.',
        '  - LOG_LEVEL="loud" is invalid: expected one of fatal, error, warn, info, debug, trace, silent.',
        '  - OPS_PORT="-1" is invalid: expected a whole number from 0 to 65535.',
      ].join('\n'),
    );
  });

  it('suggest the key meant by a mistyped one, at every level of a file', () => {
    const yaml = file(
      'typos.yaml',
      [
        'data_dri: /srv',
        'shops:',
        '  north:',
        '    base_ur1: https://x.test',
        '    pasword_file: /run/secrets/pw',
        '    filters:',
        '      shiping_to: IT',
        '      colour: red',
      ].join('\n'),
    );
    expect(configError(() => loadConfig({ SHOP_SYNC_CONFIG: yaml }, dir)).message).toBe(
      [
        'The configuration has 5 problems:',
        `  - ${yaml}: setting "data_dri" is unknown; did you mean "data_dir"?`,
        `  - ${yaml}: setting "shops.north.base_ur1" is unknown; did you mean "base_url"?`,
        `  - ${yaml}: setting "shops.north.pasword_file" is unknown; did you mean "password_file"?`,
        `  - ${yaml}: setting "shops.north.filters.shiping_to" is unknown; did you mean "shipping_to"?`,
        `  - ${yaml}: setting "shops.north.filters.colour" is unknown; known here: category_ids, featured, on_sale, price, promotable, shipping_to.`,
      ].join('\n'),
    );
  });

  it('name a shop that cannot be a directory, and a value of the wrong kind in YAML terms', () => {
    const yaml = file(
      'kinds.yaml',
      'shops:\n  "a shop":\n    per_page: 5\n  north:\n    client_id: 12345\n    filters:\n      featured: "yes"\n',
    );
    expect(configError(() => loadConfig({ SHOP_SYNC_CONFIG: yaml }, dir)).message).toBe(
      [
        'The configuration has 3 problems:',
        `  - ${yaml}: shop name "a shop" is invalid: expected letters, digits, - and _ only, at most 64 characters.`,
        `  - ${yaml}: setting "shops.north.client_id" is invalid: expected text (in YAML, quote a value that looks like a number).`,
        `  - ${yaml}: setting "shops.north.filters.featured" is invalid: expected true or false.`,
      ].join('\n'),
    );
  });

  it('never show the parsing library’s words, whatever a variable or a file key holds', () => {
    const variables = SETTINGS.flatMap((row) => (row.env ? [row.env] : []));
    const fileKeys = SETTINGS.flatMap((row) => (row.fileKey && row.scope === 'app' ? [row.fileKey] : []));
    const shopKeys = SETTINGS.flatMap((row) => (row.fileKey && row.scope !== 'app' ? [row.fileKey] : []));
    const filterKeys = [
      'category_ids',
      'featured',
      'on_sale',
      'price',
      'promotable',
      'shipping_to',
      'colour',
    ];
    const anyValue = fc.oneof(
      fc.string(),
      fc.constantFrom('NaN', '-1', '0', '1e999', '0x10', 'true', 'yes', '*/0 * * * *', 'ftp://x', 'redis//x'),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.oneof(fc.integer(), fc.string())),
      fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean())),
    );
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...variables), fc.string()),
        fc.dictionary(fc.constantFrom(...fileKeys), anyValue),
        fc.dictionary(fc.constantFrom(...shopKeys), anyValue),
        fc.dictionary(fc.constantFrom(...filterKeys), anyValue),
        (env, top, shop, filters) => {
          const yaml = file('any.yaml', stringify({ ...top, shops: { north: { ...shop, filters } } }));
          try {
            loadConfig({ ...env, SHOP_SYNC_CONFIG: yaml }, dir);
          } catch (error) {
            if (!(error instanceof ConfigError)) throw error;
            expect(error.message).not.toMatch(LIBRARY_WORDS);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('a setting given both as NAME and NAME_FILE', () => {
  const secret = file('pw', 'from-file\n');

  it('is refused rather than one silently winning, in the environment and in a file', () => {
    for (const name of ['MARKETPLACE_PASSWORD', 'OPS_PASSWORD', 'NOTIFY_SECRET']) {
      const login = name === 'OPS_PASSWORD' ? { OPS_USERNAME: 'prom' } : {};
      const error = configError(() =>
        loadConfig({ ...login, [name]: 'inline', [`${name}_FILE`]: secret }, dir),
      );
      expect(error.setting).toBe(name);
      expect(error.message).toBe(`${name} and ${name}_FILE are both set: set one of them.`);
    }
    const yaml = file('both.yaml', `shops:\n  north:\n    password: inline\n    password_file: ${secret}\n`);
    expect(configError(() => loadConfig({ SHOP_SYNC_CONFIG: yaml }, dir)).message).toBe(
      `${yaml}: settings "shops.north.password" and "shops.north.password_file" are both set: keep one of them.`,
    );
  });

  it('is fine as either alone; an empty NAME counts as not set', () => {
    const file1 = loadConfig({ MARKETPLACE_PASSWORD: '', MARKETPLACE_PASSWORD_FILE: secret }, dir);
    expect(findShop(file1, undefined).credentials.password).toEqual({ file: secret });
    const inline = loadConfig({ MARKETPLACE_PASSWORD: 'inline', MARKETPLACE_PASSWORD_FILE: ' ' }, dir);
    expect(findShop(inline, undefined).credentials.password).toEqual({ value: 'inline' });
  });

  it('names the setting and the path when the _FILE file is missing, when the secret is used', () => {
    const missing = path.join(dir, 'no-such-secret');
    const config = loadConfig(
      {
        MARKETPLACE_BASE_URL: 'https://x.test',
        MARKETPLACE_CLIENT_ID: 'id',
        MARKETPLACE_CLIENT_SECRET_FILE: missing,
        NOTIFY_SECRET_FILE: missing,
      },
      dir,
    );
    const error = configError(() => requireConnection(findShop(config, undefined)));
    expect(error.setting).toBe('MARKETPLACE_CLIENT_SECRET_FILE');
    expect(error.message).toBe(
      `MARKETPLACE_CLIENT_SECRET_FILE names ${missing}, which cannot be read (ENOENT).`,
    );
    expect(configError(() => readSecret(config.notifySecret as SecretSetting)).message).toBe(
      `NOTIFY_SECRET_FILE names ${missing}, which cannot be read (ENOENT).`,
    );
  });
});
