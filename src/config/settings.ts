import type { ListingFilters } from './listing-filters.js';
import * as type from './setting-types.js';

/**
 * Every setting, one row each: its environment variable, its key in a config file, its type, its
 * default and what it means. The loader (`config.ts`), the configuration's types, the names in error
 * messages and the README's table all come from these rows: a new setting is one row here.
 *
 * This module imports nothing but the types of values, so that the client and the logger can take
 * names and types from it without importing the loader.
 */

/** Where a setting's variable applies, and where its key sits in a config file. */
type Scope =
  /** One value for the process; a top-level key in a file. */
  | 'app'
  /** The variable configures the shop named by SHOP_NAME; the key sits under `shops.<name>`. */
  | 'shop'
  /** The variable applies to every shop; the key sits under `shops.<name>`. */
  | 'shops'
  /** Environment only: where the configuration comes from, and the ops port's secrets. */
  | 'env';

/** What a default may depend on: whether a person watches stderr. */
export interface DefaultContext {
  readonly stderrIsTerminal: boolean;
}

export interface Setting<T> {
  readonly env?: string;
  readonly fileKey?: string;
  readonly scope: Scope;
  readonly type: type.SettingType<NonNullable<T>>;
  readonly default: T | ((context: DefaultContext) => T);
  /** The default as the README shows it, when the value alone does not say it. */
  readonly shownDefault?: string;
  readonly meaning: string;
  /**
   * Also as `NAME_FILE` (and `key_file`), located at start-up and read when used, so that a rotated
   * file is picked up. `secret`: the file is where it belongs, so a missing one is named by its `_file` key.
   */
  readonly fromFile?: 'also' | 'secret';
  /** A value that may carry a password: messages name the setting without echoing it. */
  readonly hidden?: true;
  /** A path: relative to the working directory in a variable, to the file's folder in a file. */
  readonly path?: true;
  /** The key is also allowed at the top of a file, as every shop's default. */
  readonly topLevelDefault?: true;
}

function setting<T>(row: Setting<T>): Setting<T> {
  return row;
}

/** The largest page size shop-sync asks for: a bigger one only makes each failed request cost more. */
export const MAX_PER_PAGE = 1000;
const MAX_IN_FLIGHT = 64;
const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * A share alone would hold every small shop (3 of 20 items is 15 %): by default a run is held only
 * when it removes more than 10 % of the shop and more than 10 items.
 */
const DEFAULT_MAX_REMOVED: type.RemovalLimit = Object.freeze({ percent: 10, items: 10 });

/** What a sync needs to reach the marketplace. Located at start-up, the credentials read when the shop is used. */
export const CONNECTION = {
  baseUrl: setting<string | undefined>({
    env: 'MARKETPLACE_BASE_URL',
    fileKey: 'base_url',
    scope: 'shop',
    type: type.text,
    default: undefined,
    shownDefault: 'none: a sync needs it',
    meaning: "the API's base address; `/v1/...` paths are appended",
  }),
  clientId: setting<string | undefined>({
    env: 'MARKETPLACE_CLIENT_ID',
    fileKey: 'client_id',
    scope: 'shop',
    type: type.text,
    default: undefined,
    meaning: "the application's id",
    fromFile: 'also',
  }),
  clientSecret: setting<string | undefined>({
    env: 'MARKETPLACE_CLIENT_SECRET',
    fileKey: 'client_secret',
    scope: 'shop',
    type: type.text,
    default: undefined,
    meaning: "the application's secret",
    fromFile: 'secret',
  }),
  username: setting<string | undefined>({
    env: 'MARKETPLACE_USERNAME',
    fileKey: 'username',
    scope: 'shop',
    type: type.text,
    default: undefined,
    meaning: "the shop owner's user name (password grant)",
    fromFile: 'also',
  }),
  password: setting<string | undefined>({
    env: 'MARKETPLACE_PASSWORD',
    fileKey: 'password',
    scope: 'shop',
    type: type.text,
    default: undefined,
    meaning: "the shop owner's password",
    fromFile: 'secret',
  }),
};

export type ConnectionKey = keyof typeof CONNECTION;

/** Each connection setting's name as the user wrote it, for messages about it. */
export type SettingNames = { readonly [K in ConnectionKey]: string };

/** A setting's environment variable, for the rows that have one. */
export function variable(row: Setting<unknown>): string {
  if (row.env === undefined) throw new Error(`the setting ${row.fileKey} has no variable`);
  return row.env;
}

/** The connection settings' names when a shop is configured from the environment. */
export const ENV_SETTING_NAMES: SettingNames = Object.freeze({
  baseUrl: variable(CONNECTION.baseUrl),
  clientId: variable(CONNECTION.clientId),
  clientSecret: variable(CONNECTION.clientSecret),
  username: variable(CONNECTION.username),
  password: variable(CONNECTION.password),
});

/** The rest of a shop's settings. */
export const SHOP = {
  allowInsecure: setting<boolean>({
    env: 'MARKETPLACE_ALLOW_INSECURE',
    fileKey: 'allow_insecure',
    scope: 'shop',
    type: type.flag,
    default: false,
    shownDefault: 'off',
    meaning: '`1` or `true` allows a plain `http:` base URL to a host that is not loopback',
  }),
  perPage: setting<number>({
    env: 'SYNC_PER_PAGE',
    fileKey: 'per_page',
    scope: 'shops',
    type: type.wholeNumber(1, MAX_PER_PAGE),
    default: 100,
    meaning: `page size to ask for, 1 to ${MAX_PER_PAGE} (the server may cap it lower: \`check\` shows what it serves)`,
  }),
  schedule: setting<string>({
    env: 'SYNC_SCHEDULE',
    fileKey: 'schedule',
    scope: 'shops',
    type: type.cronPattern,
    default: '*/15 * * * *',
    meaning: 'cron pattern of scheduled syncs (worker)',
  }),
  order: setting<string | undefined>({
    fileKey: 'order',
    scope: 'shops',
    type: type.text,
    default: undefined,
    shownDefault: "the marketplace's",
    meaning: "the listing's order (`title`, `price_desc`)",
  }),
  locale: setting<string | undefined>({
    fileKey: 'locale',
    scope: 'shops',
    type: type.locale,
    default: undefined,
    shownDefault: "the marketplace's",
    meaning: "the listing's language (`en`, `it`)",
  }),
  filters: setting<ListingFilters>({
    fileKey: 'filters',
    scope: 'shops',
    type: type.filters,
    default: {},
    shownDefault: 'none',
    meaning:
      "the listing's `f` filters: `category_ids`, `featured`, `on_sale`, `price` as `lo..hi`, `promotable`, `shipping_to` as two capital letters (checked at start-up by the rules the client applies)",
  }),
  notifyUrl: setting<string | undefined>({
    env: 'NOTIFY_URL',
    fileKey: 'notify_url',
    scope: 'shops',
    type: type.notifyUrl,
    default: undefined,
    shownDefault: 'none: no notifications',
    meaning:
      "where each finished run is POSTed (see [Notifications](docs/operations.md#notifications)); a top-level `notify_url` in a file is every shop's default",
    hidden: true,
    topLevelDefault: true,
  }),
  maxRemoved: setting<type.RemovalLimit>({
    env: 'SYNC_MAX_REMOVED',
    fileKey: 'max_removed',
    scope: 'shops',
    type: type.removalLimit,
    default: DEFAULT_MAX_REMOVED,
    shownDefault: 'held above 10 % **and** above 10 items',
    meaning:
      'the most items one run may remove before it is held (its feeds not replaced, see [Held runs](docs/operations.md#held-runs)): a count (`500`), a share of the last complete run (`10%`), or `none`',
  }),
};

/** Where the configuration comes from. */
export const SOURCES = {
  shopName: setting<string>({
    env: 'SHOP_NAME',
    scope: 'env',
    type: type.shopName,
    default: 'default',
    meaning: `name of the shop configured from the environment (${type.SHOP_NAME_RULE})`,
  }),
  configFile: setting<string | undefined>({
    env: 'SHOP_SYNC_CONFIG',
    scope: 'env',
    type: type.text,
    default: undefined,
    shownDefault: 'none',
    meaning: 'path to a YAML or JSON file listing several shops with their own settings',
    path: true,
  }),
};

/** The process's settings, one value each. */
export const APP = {
  dataDir: setting<string>({
    env: 'DATA_DIR',
    fileKey: 'data_dir',
    scope: 'app',
    type: type.text,
    default: './data',
    meaning: 'where stores and feeds are written',
    path: true,
  }),
  redisUrl: setting<string>({
    env: 'REDIS_URL',
    fileKey: 'redis_url',
    scope: 'app',
    type: type.redisUrl,
    default: 'redis://127.0.0.1:6379',
    meaning: "BullMQ's Redis",
    hidden: true,
  }),
  resumeWindowMinutes: setting<number>({
    env: 'SYNC_RESUME_WINDOW_MINUTES',
    fileKey: 'resume_window_minutes',
    scope: 'app',
    type: type.number('a number of minutes, 0 or more', (n) => n >= 0),
    default: 60,
    meaning:
      'an interrupted run that started less than this ago is resumed from its checkpoint; `0` never resumes',
  }),
  retryBudgetSeconds: setting<number>({
    env: 'SYNC_RETRY_BUDGET_SECONDS',
    fileKey: 'retry_budget_seconds',
    scope: 'app',
    type: type.number('a number of seconds above 0', (n) => n > 0),
    default: 120,
    meaning:
      'how long one marketplace request keeps being retried (429, 5xx, timeouts, dropped connections) before the sync fails, and how long a listing may outrun the reader (no progress towards its end) before the sync fails with `LISTING_MOVED`',
  }),
  maxInFlight: setting<number>({
    env: 'SYNC_MAX_IN_FLIGHT',
    fileKey: 'max_in_flight',
    scope: 'app',
    type: type.wholeNumber(1, MAX_IN_FLIGHT),
    default: 8,
    meaning: `the most listing requests one sync keeps in flight (read-ahead adapts below it), 1 to ${MAX_IN_FLIGHT}`,
  }),
  keepRuns: setting<number | null>({
    env: 'SYNC_KEEP_RUNS',
    fileKey: 'keep_runs',
    scope: 'app',
    type: type.wholeNumber(1),
    default: null,
    shownDefault: 'keep all',
    meaning: 'complete runs kept after each sync (older ones are pruned)',
  }),
  feedsGzip: setting<boolean>({
    env: 'FEEDS_GZIP',
    fileKey: 'feeds_gzip',
    scope: 'app',
    type: type.flag,
    default: false,
    shownDefault: 'off',
    meaning:
      '`1` or `true` writes `inventory.csv.gz` and `changes.csv.gz` instead of plain CSV (and removes the plain ones); `0` or `false` is off, any other value an error',
  }),
  queuePrefix: setting<string>({
    env: 'SYNC_QUEUE_PREFIX',
    fileKey: 'queue_prefix',
    scope: 'app',
    type: type.keyPrefix,
    default: 'shop-sync',
    meaning: 'prefix of every Redis key the worker and `trigger` use (keeps deployments apart)',
  }),
  workerConcurrency: setting<number | null>({
    env: 'WORKER_CONCURRENCY',
    fileKey: 'worker_concurrency',
    scope: 'app',
    type: type.wholeNumber(1),
    default: null,
    shownDefault: 'one per shop, at most 4',
    meaning: 'syncs one worker runs at once (never two of one shop)',
  }),
  logLevel: setting<string>({
    env: 'LOG_LEVEL',
    fileKey: 'log_level',
    scope: 'app',
    type: type.oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    meaning:
      'pino level: `fatal`, `error`, `warn`, `info`, `debug` (also prints stack traces of errors), `trace`, `silent`',
  }),
  logFormat: setting<LogFormat>({
    env: 'LOG_FORMAT',
    fileKey: 'log_format',
    scope: 'app',
    type: type.oneOf(LOG_FORMATS),
    default: ({ stderrIsTerminal }) => (stderrIsTerminal ? 'pretty' : 'json'),
    shownDefault: '`pretty` when stderr is a terminal, else `json`',
    meaning:
      '`json` (one JSON object a line, for machines) or `pretty` (one readable line per entry with the local time, by pino-pretty; an info line shows its message alone unless `LOG_LEVEL` is `debug` or `trace`)',
  }),
  opsPort: setting<number>({
    env: 'OPS_PORT',
    fileKey: 'ops_port',
    scope: 'app',
    type: type.wholeNumber(0, 65535),
    default: 9464,
    meaning:
      "the worker's HTTP port for `/healthz`, `/metrics` and the queue dashboard, 0 to 65535; `0` turns it off",
  }),
  shutdownGraceSeconds: setting<number>({
    env: 'SHUTDOWN_GRACE_SECONDS',
    fileKey: 'shutdown_grace_seconds',
    scope: 'app',
    type: type.number('a number of seconds from 0 to 3600', (n) => n >= 0 && n <= 3600),
    default: 20,
    meaning: 'on SIGTERM, how long the worker waits for running syncs before it stops them and exits',
  }),
  opsHost: setting<string>({
    env: 'OPS_HOST',
    fileKey: 'ops_host',
    scope: 'app',
    type: type.hostName,
    default: '127.0.0.1',
    shownDefault: '`127.0.0.1` (the image sets `0.0.0.0`)',
    meaning: 'the address the ops port binds (`0.0.0.0`: every interface)',
  }),
};

/** The ops port's login and the notifications' key: environment only, located at start-up, read when used. */
export const ACCESS = {
  opsUsername: setting<string | undefined>({
    env: 'OPS_USERNAME',
    scope: 'env',
    type: type.text,
    default: undefined,
    shownDefault: 'no login',
    meaning:
      'with `OPS_PASSWORD`, the HTTP Basic login `/metrics` and `/queues` require; `/healthz` stays open',
  }),
  opsPassword: setting<string | undefined>({
    env: 'OPS_PASSWORD',
    scope: 'env',
    type: type.text,
    default: undefined,
    shownDefault: 'no login',
    meaning: 'the password of that login (both or neither)',
    fromFile: 'secret',
  }),
  notifySecret: setting<string | undefined>({
    env: 'NOTIFY_SECRET',
    scope: 'env',
    type: type.text,
    default: undefined,
    shownDefault: 'none: unsigned',
    meaning: "the key of the notifications' `X-Shop-Sync-Signature` (HMAC-SHA256)",
    fromFile: 'secret',
  }),
};

/** Every setting, in the README's order. */
export const SETTINGS: readonly Setting<unknown>[] = [
  ...Object.values(CONNECTION),
  ...Object.values(SHOP),
  ...Object.values(SOURCES),
  ...Object.values(APP),
  ...Object.values(ACCESS),
];

/** The environment variables a sync of the environment's shop needs (each also as `NAME_FILE`). */
export const CONNECTION_VARIABLES: readonly string[] = Object.values(ENV_SETTING_NAMES);

/** How the README and messages write the setting that allows clear text. */
export const ALLOW_INSECURE_VARIABLE = variable(SHOP.allowInsecure);

/** The value type of a row. */
export type ValueOf<S> = S extends Setting<infer T> ? T : never;
