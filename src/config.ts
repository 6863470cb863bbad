import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CronExpressionParser } from 'cron-parser';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ENV_SETTING_NAMES, type SettingNames } from './api/auth/token-manager.js';
import { validateBaseUrl } from './api/http/http-client.js';
import { type ListingFilters, listingFiltersSchema, listingLocaleSchema } from './api/listing/query.js';
import { ConfigError } from './errors.js';

/**
 * Configuration is read once at start-up from the environment and an optional YAML/JSON file,
 * validated, and frozen. No other module reads the environment: they get these objects. A shop's
 * credentials are only located here; `requireConnection` reads them when that shop is used.
 */

/** The settings a sync needs to reach the marketplace: each one's environment variable and file key. */
const CONNECTION = (
  [
    { key: 'baseUrl', fileKey: 'base_url' },
    { key: 'clientId', fileKey: 'client_id' },
    { key: 'clientSecret', fileKey: 'client_secret' },
    { key: 'username', fileKey: 'username' },
    { key: 'password', fileKey: 'password' },
  ] as const
).map((setting) => ({ ...setting, env: ENV_SETTING_NAMES[setting.key] }));

/** The environment variables a sync of the environment's shop needs (each also as `NAME_FILE`). */
export const CONNECTION_VARIABLES: readonly string[] = CONNECTION.map((setting) => setting.env);

type ConnectionKey = (typeof CONNECTION)[number]['key'];
type CredentialKey = Exclude<ConnectionKey, 'baseUrl'>;

export type { SettingNames };

/** Where one credential comes from: a value, or a file read when the shop is used. */
export interface CredentialSource {
  readonly value?: string;
  readonly file?: string;
}

export interface ShopConfig {
  readonly name: string;
  readonly baseUrl: string | undefined;
  readonly credentials: Readonly<Record<CredentialKey, CredentialSource | undefined>>;
  readonly settingNames: SettingNames;
  readonly allowInsecure: boolean;
  readonly perPage: number;
  readonly schedule: string;
  readonly order: string | undefined;
  readonly locale: string | undefined;
  readonly filters: Readonly<ListingFilters>;
  /** Where each finished run of this shop is POSTed (NOTIFY_URL, else the file's `notify_url`); none: no notifications. */
  readonly notifyUrl: string | undefined;
}

/** A secret setting located but not read: `read` reads it when it is used (a file may appear later). */
export interface SecretSetting {
  /** The setting as the user wrote it (`OPS_PASSWORD_FILE`). */
  readonly setting: string;
  readonly source: CredentialSource;
}

/** The ops port's HTTP Basic login for `/metrics` and `/queues`. */
export interface OpsLogin {
  readonly username: string;
  readonly password: SecretSetting;
}

export type LogFormat = 'json' | 'pretty';

export interface AppConfig {
  readonly dataDir: string;
  readonly redisUrl: string;
  readonly logLevel: string;
  readonly logFormat: LogFormat;
  /** An interrupted run younger than this is resumed from its checkpoint instead of started over. */
  readonly resumeWindowMinutes: number;
  /** How long one marketplace request may keep being retried before the sync fails. */
  readonly retryBudgetSeconds: number;
  /** The most listing requests one sync keeps in flight; read-ahead adapts below it. */
  readonly maxInFlight: number;
  /** Complete runs to keep after each sync; `null` keeps all. */
  readonly keepRuns: number | null;
  readonly feedsGzip: boolean;
  /** Namespaces the worker's Redis keys (queue, schedulers, shared tokens): deployments sharing a Redis stay apart. */
  readonly queuePrefix: string;
  /** Syncs one worker process runs at once (each of a different shop); `null`: one per shop, bounded. */
  readonly workerConcurrency: number | null;
  /** On SIGTERM, how long the worker waits for running syncs before it stops them. */
  readonly shutdownGraceSeconds: number;
  /** The worker's HTTP port for health, metrics and the dashboard; 0 turns it off. */
  readonly opsPort: number;
  /** The address the ops port binds: loopback unless the operator opens it (the image sets 0.0.0.0). */
  readonly opsHost: string;
  /** When set, `/metrics` and `/queues` ask for this login; `/healthz` stays open for probes. */
  readonly opsLogin: OpsLogin | null;
  /** The key of the notifications' HMAC-SHA256 signature; undefined: deliveries go unsigned. */
  readonly notifySecret: SecretSetting | undefined;
  readonly shops: Readonly<Record<string, ShopConfig>>;
  /** The shop a command uses when `--shop` is not given. */
  readonly defaultShop: string;
}

export type Env = Readonly<Record<string, string | undefined>>;

/** A shop name: it becomes a directory name and a Redis key, so it is short and plain. */
export const SHOP_NAME_MAX = 64;
const SHOP_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;
export const SHOP_NAME_RULE = `letters, digits, - and _ only, at most ${SHOP_NAME_MAX} characters`;

export function isShopName(name: string): boolean {
  return name.length <= SHOP_NAME_MAX && SHOP_NAME_PATTERN.test(name);
}

/** The largest page size shop-sync asks for: a bigger one only makes each failed request cost more. */
export const MAX_PER_PAGE = 1000;
const MAX_IN_FLIGHT = 64;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const LOG_FORMATS = ['json', 'pretty'] as const;
/** The documented values of on/off settings; anything else (`yes`, `on`) is a mistake worth reporting. */
const FLAG_VALUES = ['1', '0', 'true', 'false'] as const;
const DEFAULTS = {
  dataDir: './data',
  redisUrl: 'redis://127.0.0.1:6379',
  perPage: 100,
  schedule: '*/15 * * * *',
  queuePrefix: 'shop-sync',
  maxInFlight: 8,
  shutdownGraceSeconds: 20,
  opsPort: 9464,
  opsHost: '127.0.0.1',
};

const redisUrl = z
  .string()
  .refine(
    (value) => URL.canParse(value) && /^rediss?:$/.test(new URL(value).protocol),
    'expected a redis:// or rediss:// URL',
  );
const positiveInt = z.coerce.number().int().positive();
const intBetween = (min: number, max: number) =>
  z.coerce
    .number()
    .int(`expected a whole number from ${min} to ${max}`)
    .min(min, `expected a whole number from ${min} to ${max}`)
    .max(max, `expected a whole number from ${min} to ${max}`);
const perPage = intBetween(1, MAX_PER_PAGE);
const maxInFlight = intBetween(1, MAX_IN_FLIGHT);
const opsPort = intBetween(0, 65535);
const graceSeconds = z.coerce.number().nonnegative().max(3600, 'expected at most 3600 seconds');
const opsHost = z.string().regex(/^[A-Za-z0-9.:_-]+$/, 'expected an IP address or a host name');
/**
 * A notification target: http(s) only, and no user or password in it, since the URL is kept in Redis
 * with each pending delivery and shown in `status`.
 */
const notifyUrl = z
  .string()
  .refine(
    (value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol),
    'expected an http:// or https:// URL',
  )
  .refine(
    (value) => !URL.canParse(value) || (new URL(value).username === '' && new URL(value).password === ''),
    'a user or password in the URL would be kept in Redis: put a token in NOTIFY_SECRET instead',
  );
const queuePrefix = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, -, _ and . only');
const flag = z
  .union([z.boolean(), z.enum(FLAG_VALUES)], { error: `expected one of ${FLAG_VALUES.join(', ')}` })
  .transform((v) => v === true || v === '1' || v === 'true');
const shopName = z.string().refine(isShopName, SHOP_NAME_RULE);

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
  per_page: perPage.optional(),
  schedule: z.string().min(1).optional(),
  order: z.string().min(1).optional(),
  locale: listingLocaleSchema.optional(),
  filters: listingFiltersSchema.optional(),
  notify_url: notifyUrl.optional(),
});

const fileSchema = z.strictObject({
  data_dir: z.string().min(1).optional(),
  redis_url: redisUrl.optional(),
  log_level: z.enum(LOG_LEVELS).optional(),
  log_format: z.enum(LOG_FORMATS).optional(),
  resume_window_minutes: z.coerce.number().nonnegative().optional(),
  retry_budget_seconds: z.coerce.number().positive().optional(),
  max_in_flight: maxInFlight.optional(),
  keep_runs: positiveInt.optional(),
  feeds_gzip: flag.optional(),
  queue_prefix: queuePrefix.optional(),
  worker_concurrency: positiveInt.optional(),
  shutdown_grace_seconds: graceSeconds.optional(),
  ops_port: opsPort.optional(),
  ops_host: opsHost.optional(),
  notify_url: notifyUrl.optional(),
  shops: z.record(shopName, fileShopSchema).default({}),
});

type FileConfig = z.infer<typeof fileSchema>;
type FileShop = z.infer<typeof fileShopSchema>;

/** What the configuration cannot know by itself: whether a person watches stderr. */
export interface LoadOptions {
  readonly stderrIsTerminal?: boolean;
}

export function loadConfig(env: Env, cwd = process.cwd(), options: LoadOptions = {}): AppConfig {
  const configPath = nonEmpty(env.SHOP_SYNC_CONFIG);
  const configFile = configPath ? path.resolve(cwd, configPath) : undefined;
  const file = configFile ? readConfigFile(configFile) : fileSchema.parse({});
  // Paths in a config file mean what they say wherever the command is run from.
  const fileDir = configFile ? path.dirname(configFile) : cwd;
  const envShopName = nonEmpty(env.SHOP_NAME) ?? 'default';
  if (!isShopName(envShopName)) {
    const shown = envShopName.length > 40 ? `${envShopName.slice(0, 40)}…` : envShopName;
    throw new ConfigError('SHOP_NAME', `SHOP_NAME "${shown}" is invalid: ${SHOP_NAME_RULE}.`);
  }

  const shops: Record<string, ShopConfig> = {};
  for (const [name, shop] of Object.entries(file.shops)) {
    const shopEnv = name === envShopName ? env : {};
    shops[name] = shopFromSources(
      name,
      { shop, dir: fileDir, where: `shops.${name}`, notifyUrl: file.notify_url },
      shopEnv,
      env,
      cwd,
    );
  }
  const envConfiguresShop = Object.keys(env).some((k) => k.startsWith('MARKETPLACE_') && nonEmpty(env[k]));
  if (!shops[envShopName] && (envConfiguresShop || Object.keys(shops).length === 0)) {
    shops[envShopName] = shopFromSources(envShopName, undefined, env, env, cwd);
  }

  const config: AppConfig = {
    dataDir: nonEmpty(env.DATA_DIR)
      ? path.resolve(cwd, env.DATA_DIR as string)
      : path.resolve(fileDir, file.data_dir ?? DEFAULTS.dataDir),
    redisUrl: redisUrlSetting(env) ?? file.redis_url ?? DEFAULTS.redisUrl,
    logLevel: envSetting(env, 'LOG_LEVEL', z.enum(LOG_LEVELS)) ?? file.log_level ?? 'info',
    logFormat:
      envSetting(env, 'LOG_FORMAT', z.enum(LOG_FORMATS)) ??
      file.log_format ??
      (options.stderrIsTerminal ? 'pretty' : 'json'),
    resumeWindowMinutes:
      envSetting(env, 'SYNC_RESUME_WINDOW_MINUTES', z.coerce.number().nonnegative()) ??
      file.resume_window_minutes ??
      60,
    retryBudgetSeconds:
      envSetting(env, 'SYNC_RETRY_BUDGET_SECONDS', z.coerce.number().positive()) ??
      file.retry_budget_seconds ??
      120,
    maxInFlight:
      envSetting(env, 'SYNC_MAX_IN_FLIGHT', maxInFlight) ?? file.max_in_flight ?? DEFAULTS.maxInFlight,
    keepRuns: envSetting(env, 'SYNC_KEEP_RUNS', positiveInt) ?? file.keep_runs ?? null,
    feedsGzip: envSetting(env, 'FEEDS_GZIP', flag) ?? file.feeds_gzip ?? false,
    queuePrefix:
      envSetting(env, 'SYNC_QUEUE_PREFIX', queuePrefix) ?? file.queue_prefix ?? DEFAULTS.queuePrefix,
    workerConcurrency: envSetting(env, 'WORKER_CONCURRENCY', positiveInt) ?? file.worker_concurrency ?? null,
    shutdownGraceSeconds:
      envSetting(env, 'SHUTDOWN_GRACE_SECONDS', graceSeconds) ??
      file.shutdown_grace_seconds ??
      DEFAULTS.shutdownGraceSeconds,
    opsPort: envSetting(env, 'OPS_PORT', opsPort) ?? file.ops_port ?? DEFAULTS.opsPort,
    opsHost: envSetting(env, 'OPS_HOST', opsHost) ?? file.ops_host ?? DEFAULTS.opsHost,
    opsLogin: opsLoginSetting(env, cwd),
    notifySecret: secretSetting(env, 'NOTIFY_SECRET', cwd),
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
  readonly settingNames: SettingNames;
}

/**
 * What a sync needs to reach the marketplace, its secrets read now (only the shop in use needs its
 * secret files); names the first missing or unreadable setting otherwise.
 */
export function requireConnection(shop: ShopConfig): ShopConnection {
  const names = shop.settingNames;
  const missing = (key: ConnectionKey) =>
    new ConfigError(names[key], `${names[key]} is not set for shop "${shop.name}": a sync needs it.`);
  if (shop.baseUrl === undefined) throw missing('baseUrl');
  const read = (key: CredentialKey): string => {
    const source = shop.credentials[key];
    if (source?.value !== undefined) return source.value;
    if (source?.file !== undefined) return readSecretFile(source.file, names[key]);
    throw missing(key);
  };
  return Object.freeze({
    baseUrl: shop.baseUrl,
    clientId: read('clientId'),
    clientSecret: read('clientSecret'),
    username: read('username'),
    password: read('password'),
    allowInsecure: shop.allowInsecure,
    settingNames: names,
  });
}

/** A shop given by values rather than settings (the demo's): each setting named by its variable. */
export function shopWithCredentials(
  name: string,
  connection: Omit<ShopConnection, 'settingNames' | 'allowInsecure'>,
): ShopConfig {
  const { baseUrl, ...credentials } = connection;
  return Object.freeze<ShopConfig>({
    name,
    baseUrl,
    credentials: Object.freeze({
      clientId: { value: credentials.clientId },
      clientSecret: { value: credentials.clientSecret },
      username: { value: credentials.username },
      password: { value: credentials.password },
    }),
    settingNames: ENV_SETTING_NAMES,
    allowInsecure: false,
    perPage: DEFAULTS.perPage,
    schedule: DEFAULTS.schedule,
    order: undefined,
    locale: undefined,
    filters: {},
    notifyUrl: undefined,
  });
}

interface FileSource {
  readonly shop: FileShop;
  /** The config file's folder: relative `*_file` paths resolve against it. */
  readonly dir: string;
  /** `shops.<name>`: the prefix of this shop's settings as written. */
  readonly where: string;
  /** The file's top-level `notify_url`, for shops without their own. */
  readonly notifyUrl: string | undefined;
}

/**
 * One shop's settings: `env` holds the variables that configure this shop (empty for file shops other
 * than SHOP_NAME's), `globalEnv` those that apply to every shop.
 */
function shopFromSources(
  name: string,
  fromFile: FileSource | undefined,
  env: Env,
  globalEnv: Env,
  cwd: string,
): ShopConfig {
  const names = {} as Record<ConnectionKey, string>;
  const sources: Record<string, CredentialSource | undefined> = {};
  for (const { key, env: envName, fileKey } of CONNECTION) {
    const located = locate(envName, fileKey, env, fromFile, cwd);
    names[key] = located.setting;
    sources[key] = located.source;
  }
  const { baseUrl: baseUrlSource, ...credentials } = sources;
  const allowInsecureEnv = envSetting(env, 'MARKETPLACE_ALLOW_INSECURE', flag);
  const allowInsecure = allowInsecureEnv ?? fromFile?.shop.allow_insecure ?? false;
  const baseUrl = baseUrlSource?.value;
  if (baseUrl !== undefined) {
    validateBaseUrl(baseUrl, allowInsecure, {
      baseUrl: names.baseUrl,
      allowInsecure:
        fromFile && allowInsecureEnv === undefined
          ? `${fromFile.where}.allow_insecure: true`
          : 'MARKETPLACE_ALLOW_INSECURE=1',
    });
  }
  const where = fromFile?.where;
  return Object.freeze<ShopConfig>({
    name,
    baseUrl: baseUrl?.replace(/\/+$/, ''),
    credentials: Object.freeze(credentials) as ShopConfig['credentials'],
    settingNames: Object.freeze(names),
    allowInsecure,
    perPage: envSetting(globalEnv, 'SYNC_PER_PAGE', perPage) ?? fromFile?.shop.per_page ?? DEFAULTS.perPage,
    schedule: checkSchedule(
      nonEmpty(globalEnv.SYNC_SCHEDULE) ?? fromFile?.shop.schedule ?? DEFAULTS.schedule,
      globalEnv.SYNC_SCHEDULE || !where ? 'SYNC_SCHEDULE' : `${where}.schedule`,
    ),
    order: fromFile?.shop.order,
    locale: fromFile?.shop.locale,
    filters: Object.freeze({ ...(fromFile?.shop.filters ?? {}) }),
    notifyUrl: notifyUrlSetting(globalEnv) ?? fromFile?.shop.notify_url ?? fromFile?.notifyUrl,
  });
}

/**
 * Where one connection setting comes from, in order: `NAME`, `NAME_FILE`, the file's key, the file's
 * `key_file`. When none is set, the name a user would set: the variable, or the file's key (`_file`
 * for secrets, which belong in files).
 */
function locate(
  envName: string,
  fileKey: (typeof CONNECTION)[number]['fileKey'],
  env: Env,
  fromFile: FileSource | undefined,
  cwd: string,
): { setting: string; source: CredentialSource | undefined } {
  const value = nonEmpty(env[envName]);
  if (value !== undefined) return { setting: envName, source: { value } };
  // Only the credentials may come from files: the base URL is not a secret.
  const envFile = fileKey === 'base_url' ? undefined : nonEmpty(env[`${envName}_FILE`]);
  if (envFile !== undefined)
    return { setting: `${envName}_FILE`, source: { file: path.resolve(cwd, envFile) } };
  if (!fromFile) return { setting: envName, source: undefined };
  const fileValue = fromFile.shop[fileKey];
  if (fileValue !== undefined)
    return { setting: `${fromFile.where}.${fileKey}`, source: { value: fileValue } };
  const secretFile = fileKey === 'base_url' ? undefined : fromFile.shop[`${fileKey}_file` as const];
  const fileSetting = `${fromFile.where}.${fileKey}_file`;
  if (secretFile !== undefined)
    return { setting: fileSetting, source: { file: path.resolve(fromFile.dir, secretFile) } };
  const secret = fileKey === 'client_secret' || fileKey === 'password';
  return { setting: secret ? fileSetting : `${fromFile.where}.${fileKey}`, source: undefined };
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

/** A secret's value, read now (a `_FILE` is read each time: a rotated secret file is picked up). */
export function readSecret(secret: SecretSetting): string {
  if (secret.source.value !== undefined) return secret.source.value;
  return readSecretFile(secret.source.file as string, secret.setting);
}

/** `NAME` or `NAME_FILE` from the environment, located, not read. */
function secretSetting(env: Env, name: string, cwd: string): SecretSetting | undefined {
  const value = nonEmpty(env[name]);
  if (value !== undefined) return { setting: name, source: { value } };
  const file = nonEmpty(env[`${name}_FILE`]);
  if (file !== undefined) return { setting: `${name}_FILE`, source: { file: path.resolve(cwd, file) } };
  return undefined;
}

/** OPS_USERNAME with OPS_PASSWORD (or its file), both or neither: half a login would lock nothing. */
function opsLoginSetting(env: Env, cwd: string): OpsLogin | null {
  const username = nonEmpty(env.OPS_USERNAME);
  const password = secretSetting(env, 'OPS_PASSWORD', cwd);
  if (username === undefined && password === undefined) return null;
  if (username === undefined)
    throw new ConfigError(
      'OPS_USERNAME',
      `OPS_USERNAME is not set: ${password?.setting} needs a user name beside it.`,
    );
  if (password === undefined)
    throw new ConfigError(
      'OPS_PASSWORD',
      'OPS_PASSWORD (or OPS_PASSWORD_FILE) is not set: OPS_USERNAME needs a password beside it.',
    );
  if (username.includes(':'))
    throw new ConfigError(
      'OPS_USERNAME',
      'OPS_USERNAME must not contain ":" (HTTP Basic authentication separates the password with it).',
    );
  return Object.freeze({ username, password });
}

function readSecretFile(file: string, setting: string): string {
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

/** Like `envSetting`, without echoing the value: a URL may carry a password. */
function notifyUrlSetting(env: Env): string | undefined {
  const raw = nonEmpty(env.NOTIFY_URL);
  if (raw === undefined) return undefined;
  const parsed = notifyUrl.safeParse(raw);
  if (!parsed.success)
    throw new ConfigError('NOTIFY_URL', `NOTIFY_URL is invalid: ${parsed.error.issues[0]?.message}.`);
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
