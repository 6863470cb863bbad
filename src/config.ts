import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CronExpressionParser } from 'cron-parser';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { validateBaseUrl } from './api/http.js';
import { ConfigError } from './errors.js';

/**
 * Configuration is read once at start-up from the environment and an optional YAML/JSON file,
 * validated, and frozen. No other module reads the environment: they get these objects.
 */

export interface ShopConfig {
  readonly name: string;
  readonly baseUrl: string | undefined;
  readonly clientId: string | undefined;
  readonly clientSecret: string | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly allowInsecure: boolean;
  readonly perPage: number;
  readonly schedule: string;
  readonly order: string | undefined;
  readonly locale: string | undefined;
  readonly filters: Readonly<Record<string, string | boolean>>;
}

export interface AppConfig {
  readonly dataDir: string;
  readonly redisUrl: string;
  readonly logLevel: string;
  /** An interrupted run younger than this is resumed from its checkpoint instead of started over. */
  readonly resumeWindowMinutes: number;
  /** How long one marketplace request may keep being retried before the sync fails. */
  readonly retryBudgetSeconds: number;
  /** Complete runs to keep after each sync; `null` keeps all. */
  readonly keepRuns: number | null;
  readonly feedsGzip: boolean;
  /** Namespaces the worker's Redis keys (queue, schedulers, shared tokens): deployments sharing a Redis stay apart. */
  readonly queuePrefix: string;
  /** Syncs one worker process runs at once (each of a different shop); `null`: one per shop, bounded. */
  readonly workerConcurrency: number | null;
  /** On SIGTERM, how long the worker waits for running syncs before it stops them (they resume later). */
  readonly shutdownGraceSeconds: number;
  readonly shops: Readonly<Record<string, ShopConfig>>;
  /** The shop a command uses when `--shop` is not given. */
  readonly defaultShop: string;
}

export type Env = Readonly<Record<string, string | undefined>>;

export const SHOP_NAME = /^[A-Za-z0-9_-]+$/;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const DEFAULTS = {
  dataDir: './data',
  redisUrl: 'redis://127.0.0.1:6379',
  perPage: 100,
  schedule: '*/15 * * * *',
  queuePrefix: 'shop-sync',
};

const redisUrl = z
  .string()
  .refine(
    (value) => URL.canParse(value) && /^rediss?:$/.test(new URL(value).protocol),
    'expected a redis:// or rediss:// URL',
  );
const positiveInt = z.coerce.number().int().positive();
const queuePrefix = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, -, _ and . only');
const flag = z
  .union([z.boolean(), z.enum(['1', '0', 'true', 'false', 'yes', 'no'])])
  .transform((v) => v === true || v === '1' || v === 'true' || v === 'yes');

const fileShopSchema = z.strictObject({
  base_url: z.string().optional(),
  client_id: z.string().optional(),
  client_id_file: z.string().optional(),
  client_secret: z.string().optional(),
  client_secret_file: z.string().optional(),
  username: z.string().optional(),
  username_file: z.string().optional(),
  password: z.string().optional(),
  password_file: z.string().optional(),
  allow_insecure: flag.optional(),
  per_page: positiveInt.optional(),
  schedule: z.string().min(1).optional(),
  order: z.string().min(1).optional(),
  locale: z.string().min(1).optional(),
  filters: z.record(z.string(), z.union([z.string(), z.boolean(), z.number().transform(String)])).optional(),
});

const fileSchema = z.strictObject({
  data_dir: z.string().min(1).optional(),
  redis_url: redisUrl.optional(),
  log_level: z.enum(LOG_LEVELS).optional(),
  resume_window_minutes: z.coerce.number().nonnegative().optional(),
  retry_budget_seconds: z.coerce.number().positive().optional(),
  keep_runs: positiveInt.optional(),
  feeds_gzip: flag.optional(),
  queue_prefix: queuePrefix.optional(),
  worker_concurrency: positiveInt.optional(),
  shutdown_grace_seconds: z.coerce.number().nonnegative().optional(),
  shops: z.record(z.string().regex(SHOP_NAME, 'letters, digits, - and _ only'), fileShopSchema).default({}),
});

type FileConfig = z.infer<typeof fileSchema>;
type FileShop = z.infer<typeof fileShopSchema>;

export function loadConfig(env: Env, cwd = process.cwd()): AppConfig {
  const configPath = nonEmpty(env.SHOP_SYNC_CONFIG);
  const file = configPath ? readConfigFile(path.resolve(cwd, configPath)) : fileSchema.parse({});
  const envShopName = nonEmpty(env.SHOP_NAME) ?? 'default';
  if (!SHOP_NAME.test(envShopName)) {
    throw new ConfigError(
      'SHOP_NAME',
      `SHOP_NAME "${envShopName}" may contain only letters, digits, - and _.`,
    );
  }

  const shops: Record<string, ShopConfig> = {};
  for (const [name, shop] of Object.entries(file.shops)) {
    shops[name] = shopFromSources(name, shop, name === envShopName ? env : {}, env, `shops.${name}`);
  }
  const envConfiguresShop = Object.keys(env).some((k) => k.startsWith('MARKETPLACE_') && nonEmpty(env[k]));
  if (!shops[envShopName] && (envConfiguresShop || Object.keys(shops).length === 0)) {
    shops[envShopName] = shopFromSources(envShopName, {}, env, env, 'environment');
  }

  const config: AppConfig = {
    dataDir: path.resolve(cwd, nonEmpty(env.DATA_DIR) ?? file.data_dir ?? DEFAULTS.dataDir),
    redisUrl: redisUrlSetting(env) ?? file.redis_url ?? DEFAULTS.redisUrl,
    logLevel: envSetting(env, 'LOG_LEVEL', z.enum(LOG_LEVELS)) ?? file.log_level ?? 'info',
    resumeWindowMinutes:
      envSetting(env, 'SYNC_RESUME_WINDOW_MINUTES', z.coerce.number().nonnegative()) ??
      file.resume_window_minutes ??
      60,
    retryBudgetSeconds:
      envSetting(env, 'SYNC_RETRY_BUDGET_SECONDS', z.coerce.number().positive()) ??
      file.retry_budget_seconds ??
      120,
    keepRuns: envSetting(env, 'SYNC_KEEP_RUNS', positiveInt) ?? file.keep_runs ?? null,
    feedsGzip: envSetting(env, 'FEEDS_GZIP', flag) ?? file.feeds_gzip ?? false,
    queuePrefix:
      envSetting(env, 'SYNC_QUEUE_PREFIX', queuePrefix) ?? file.queue_prefix ?? DEFAULTS.queuePrefix,
    workerConcurrency: envSetting(env, 'WORKER_CONCURRENCY', positiveInt) ?? file.worker_concurrency ?? null,
    shutdownGraceSeconds:
      envSetting(env, 'SHUTDOWN_GRACE_SECONDS', z.coerce.number().nonnegative()) ??
      file.shutdown_grace_seconds ??
      20,
    shops: Object.freeze(shops),
    defaultShop:
      shops[envShopName] || Object.keys(shops).length !== 1 ? envShopName : (Object.keys(shops)[0] as string),
  };
  return Object.freeze(config);
}

/** The configuration of one shop, or a ConfigError that lists the shops there are. */
export function findShop(config: AppConfig, name: string | undefined): ShopConfig {
  const wanted = name ?? config.defaultShop;
  const shop = config.shops[wanted];
  if (!shop) {
    const known = Object.keys(config.shops).join(', ') || 'none';
    throw new ConfigError('--shop', `Shop "${wanted}" is not configured (configured shops: ${known}).`);
  }
  return shop;
}

export interface ShopConnection {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly username: string;
  readonly password: string;
  readonly allowInsecure: boolean;
}

/** What a sync needs to reach the marketplace; names the first missing setting otherwise. */
export function requireConnection(shop: ShopConfig): ShopConnection {
  const missing = (
    [
      ['baseUrl', 'MARKETPLACE_BASE_URL'],
      ['clientId', 'MARKETPLACE_CLIENT_ID'],
      ['clientSecret', 'MARKETPLACE_CLIENT_SECRET'],
      ['username', 'MARKETPLACE_USERNAME'],
      ['password', 'MARKETPLACE_PASSWORD'],
    ] as const
  ).find(([key]) => shop[key] === undefined);
  if (missing) {
    throw new ConfigError(missing[1], `${missing[1]} is not set for shop "${shop.name}": a sync needs it.`);
  }
  return shop as ShopConnection;
}

/**
 * One shop's settings: `env` holds the variables that configure this shop (empty for file shops other
 * than SHOP_NAME's), `globalEnv` those that apply to every shop.
 */
function shopFromSources(
  name: string,
  fromFile: FileShop,
  env: Env,
  globalEnv: Env,
  where: string,
): ShopConfig {
  const secret = (envName: string, fileKey: 'client_id' | 'client_secret' | 'username' | 'password') =>
    readSecret(env, envName) ??
    fromFile[fileKey] ??
    readSecretFile(fromFile[`${fileKey}_file`], `${where}.${fileKey}_file`);
  const baseUrl = nonEmpty(env.MARKETPLACE_BASE_URL) ?? fromFile.base_url;
  const allowInsecure =
    envSetting(env, 'MARKETPLACE_ALLOW_INSECURE', flag) ?? fromFile.allow_insecure ?? false;
  if (baseUrl !== undefined) {
    checkBaseUrl(
      baseUrl,
      allowInsecure,
      env.MARKETPLACE_BASE_URL ? 'MARKETPLACE_BASE_URL' : `${where}.base_url`,
    );
  }
  return Object.freeze<ShopConfig>({
    name,
    baseUrl: baseUrl?.replace(/\/+$/, ''),
    clientId: secret('MARKETPLACE_CLIENT_ID', 'client_id'),
    clientSecret: secret('MARKETPLACE_CLIENT_SECRET', 'client_secret'),
    username: secret('MARKETPLACE_USERNAME', 'username'),
    password: secret('MARKETPLACE_PASSWORD', 'password'),
    allowInsecure,
    perPage: envSetting(globalEnv, 'SYNC_PER_PAGE', positiveInt) ?? fromFile.per_page ?? DEFAULTS.perPage,
    schedule: checkSchedule(
      nonEmpty(globalEnv.SYNC_SCHEDULE) ?? fromFile.schedule ?? DEFAULTS.schedule,
      globalEnv.SYNC_SCHEDULE ? 'SYNC_SCHEDULE' : `${where}.schedule`,
    ),
    order: fromFile.order,
    locale: fromFile.locale,
    filters: Object.freeze({ ...(fromFile.filters ?? {}) }),
  });
}

/** A cron pattern the worker's schedulers will accept (BullMQ reads them with cron-parser too). */
function checkSchedule(pattern: string, setting: string): string {
  try {
    checkCronFields(pattern);
    CronExpressionParser.parse(pattern);
  } catch (error) {
    throw new ConfigError(
      setting,
      `${setting} "${pattern}" is not a valid cron pattern: ${firstLine(error)}.`,
    );
  }
  return pattern;
}

/** Ranges of the fields of a five-field pattern; a sixth, leading field is seconds. */
const CRON_FIELDS = [
  ['minute', 60],
  ['hour', 24],
  ['day of month', 31],
  ['month', 12],
  ['day of week', 7],
] as const;

/** What cron-parser lets through: a wrong number of fields (`*\/99 * * *`), a step longer than its field. */
function checkCronFields(pattern: string): void {
  const fields = pattern.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    throw new Error(`it has ${fields.length} fields where 5 (or 6, with seconds first) are expected`);
  }
  const named = fields.length === 6 ? [['second', 60] as const, ...CRON_FIELDS] : CRON_FIELDS;
  fields.forEach((field, index) => {
    const [name, size] = named[index] as readonly [string, number];
    for (const step of field.matchAll(/\/(\d+)/g)) {
      if (Number(step[1]) < 1 || Number(step[1]) > size)
        throw new Error(`the ${name} step /${step[1]} is outside 1-${size}`);
    }
  });
}

/** The client's own check of the base URL, reported under the setting the user wrote. */
function checkBaseUrl(value: string, allowInsecure: boolean, setting: string): void {
  try {
    validateBaseUrl(value, allowInsecure);
  } catch (error) {
    if (error instanceof ConfigError && error.setting !== setting) {
      throw new ConfigError(setting, error.message.replaceAll(error.setting, setting));
    }
    throw error;
  }
}

function readConfigFile(file: string): FileConfig {
  if (!existsSync(file))
    throw new ConfigError('SHOP_SYNC_CONFIG', `SHOP_SYNC_CONFIG names ${file}, which does not exist.`);
  let data: unknown;
  try {
    data = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError('SHOP_SYNC_CONFIG', `${file} is not valid YAML or JSON: ${firstLine(error)}`);
  }
  const parsed = fileSchema.safeParse(data ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || '(top level)';
    throw new ConfigError(
      where,
      `${file}: setting "${where}" is invalid: ${issue?.message ?? 'unknown problem'}.`,
    );
  }
  return parsed.data;
}

/** `NAME` or the contents of the file named by `NAME_FILE` (container secrets). */
function readSecret(env: Env, name: string): string | undefined {
  return nonEmpty(env[name]) ?? readSecretFile(nonEmpty(env[`${name}_FILE`]), `${name}_FILE`);
}

function readSecretFile(file: string | undefined, setting: string): string | undefined {
  if (file === undefined) return undefined;
  let value: string;
  try {
    value = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new ConfigError(setting, `${setting} names ${file}, which cannot be read (${codeOf(error)}).`);
  }
  if (value.trim() === '') throw new ConfigError(setting, `${setting} names ${file}, which is empty.`);
  return value;
}

/** Like `envSetting`, without echoing the value: a Redis URL may carry a password. */
function redisUrlSetting(env: Env): string | undefined {
  const raw = nonEmpty(env.REDIS_URL);
  if (raw !== undefined && !redisUrl.safeParse(raw).success) {
    throw new ConfigError('REDIS_URL', 'REDIS_URL is not a redis:// or rediss:// URL.');
  }
  return raw;
}

function envSetting<T>(env: Env, name: string, schema: z.ZodType<T>): T | undefined {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return undefined;
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new ConfigError(name, `${name}="${raw}" is invalid: ${parsed.error.issues[0]?.message}.`);
  return parsed.data;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? firstLine(error);
}
