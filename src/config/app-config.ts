import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { validateBaseUrl } from './base-url.js';
import { type FileSettings, readConfigFile, type Section } from './config-file.js';
import { issueText, Problems } from './config-problems.js';
import {
  ACCESS,
  ALLOW_INSECURE_VARIABLE,
  APP,
  CONNECTION,
  type ConnectionKey,
  type DefaultContext,
  ENV_SETTING_NAMES,
  type Setting,
  type SettingNames,
  SHOP,
  SOURCES,
  type ValueOf,
  variable,
} from './settings.js';
import { unknownVariableWarnings } from './unknown-variables.js';

export { isShopName, SHOP_NAME_RULE } from './setting-types.js';
export { CONNECTION_VARIABLES, type LogFormat, MAX_PER_PAGE, type SettingNames } from './settings.js';

/**
 * Configuration is read once at start-up from the environment and an optional YAML/JSON file,
 * validated against the rows of `settings.ts`, and frozen. No other module reads the environment: they
 * get these objects. A shop's credentials are only located here; `requireConnection` reads them when
 * that shop is used. Every problem found is reported at once.
 */

type CredentialKey = Exclude<ConnectionKey, 'baseUrl'>;
type Values<Group> = { readonly [K in keyof Group]: ValueOf<Group[K]> };

/** Where one credential comes from: a value, or a file read when the shop is used. */
export interface CredentialSource {
  readonly value?: string;
  readonly file?: string;
}

export interface ShopConfig extends Values<typeof SHOP> {
  readonly name: string;
  readonly baseUrl: string | undefined;
  readonly credentials: Readonly<Record<CredentialKey, CredentialSource | undefined>>;
  readonly settingNames: SettingNames;
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

export interface AppConfig extends Values<typeof APP> {
  /** When set, `/metrics` and `/queues` ask for this login; `/healthz` stays open for probes. */
  readonly opsLogin: OpsLogin | null;
  /** The key of the notifications' HMAC-SHA256 signature; undefined: deliveries go unsigned. */
  readonly notifySecret: SecretSetting | undefined;
  readonly shops: Readonly<Record<string, ShopConfig>>;
  /** The shop a command uses when `--shop` is not given. */
  readonly defaultShop: string;
  /** What the loader noticed but did not refuse (a variable that looks like a mistyped setting), for the log. */
  readonly warnings: readonly string[];
}

export type Env = Readonly<Record<string, string | undefined>>;

/** What the configuration cannot know by itself: whether a person watches stderr. */
export interface LoadOptions {
  readonly stderrIsTerminal?: boolean;
}

export function loadConfig(env: Env, cwd = process.cwd(), options: LoadOptions = {}): AppConfig {
  const problems = new Problems();
  const sources: Sources = {
    env: new EnvValues(env, cwd, problems),
    cwd,
    context: { stderrIsTerminal: options.stderrIsTerminal ?? false },
    problems,
  };
  const configPath = sources.env.value(SOURCES.configFile);
  const file = configPath === undefined ? undefined : readConfigFile(configPath, problems);
  const envShopName = sources.env.value(SOURCES.shopName) ?? defaultOf(SOURCES.shopName, sources.context);

  const shops = configuredShops(sources, file, envShopName);
  const config: AppConfig = {
    ...appValues(sources, file),
    opsLogin: opsLoginSetting(sources.env, problems),
    notifySecret: sources.env.located(ACCESS.notifySecret),
    shops: Object.freeze(shops),
    defaultShop:
      shops[envShopName] || Object.keys(shops).length !== 1 ? envShopName : (Object.keys(shops)[0] as string),
    warnings: Object.freeze(unknownVariableWarnings(env)),
  };
  problems.throwIfAny();
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
    ...groupValues(SHOP, (row) => defaultOf(row, { stderrIsTerminal: false })),
    name,
    baseUrl,
    credentials: Object.freeze({
      clientId: { value: credentials.clientId },
      clientSecret: { value: credentials.clientSecret },
      username: { value: credentials.username },
      password: { value: credentials.password },
    }),
    settingNames: ENV_SETTING_NAMES,
  });
}

/** A secret's value, read now (a `_FILE` is read each time: a rotated secret file is picked up). */
export function readSecret(secret: SecretSetting): string {
  if (secret.source.value !== undefined) return secret.source.value;
  return readSecretFile(secret.source.file as string, secret.setting);
}

interface Sources {
  readonly env: EnvValues;
  /** Relative paths in the environment resolve against it. */
  readonly cwd: string;
  readonly context: DefaultContext;
  readonly problems: Problems;
}

/** A shop of the config file: the file's settings and the shop's own mapping in it. */
interface FileShop {
  readonly settings: FileSettings;
  readonly section: Section;
}

/**
 * The environment's values, each checked once against its row however many shops read it, so that a
 * bad one is reported once.
 */
class EnvValues {
  private readonly checked = new Map<Setting<unknown>, unknown>();

  constructor(
    private readonly env: Env,
    private readonly cwd: string,
    private readonly problems: Problems,
  ) {}

  value<T>(row: Setting<T>): NonNullable<T> | undefined {
    if (!this.checked.has(row)) this.checked.set(row, this.parse(row));
    return this.checked.get(row) as NonNullable<T> | undefined;
  }

  /**
   * `NAME` or `NAME_FILE`, located, not read. Both set is refused rather than one silently winning:
   * which a deployment meant cannot be known, and the other may be a stale secret.
   */
  located(row: Setting<unknown>): SecretSetting | undefined {
    const name = variable(row);
    const value = this.raw(name);
    const file = row.fromFile ? this.raw(`${name}_FILE`) : undefined;
    if (value !== undefined && file !== undefined)
      this.problems.add(name, `${name} and ${name}_FILE are both set: set one of them.`);
    if (value !== undefined) return { setting: name, source: { value } };
    if (file !== undefined)
      return { setting: `${name}_FILE`, source: { file: path.resolve(this.cwd, file) } };
    return undefined;
  }

  /** Whether a variable that configures SHOP_NAME's shop is set. */
  configuresShop(): boolean {
    return [...Object.values(CONNECTION), ...Object.values(SHOP)]
      .filter((row) => row.scope === 'shop')
      .some((row) => {
        const name = variable(row);
        return this.raw(name) !== undefined || (row.fromFile && this.raw(`${name}_FILE`) !== undefined);
      });
  }

  raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value;
  }

  private parse(row: Setting<unknown>): unknown {
    const raw = row.env === undefined ? undefined : this.raw(row.env);
    if (raw === undefined) return undefined;
    const parsed = row.type.schema.safeParse(raw);
    if (parsed.success) return row.path ? path.resolve(this.cwd, parsed.data as string) : parsed.data;
    const text = issueText(parsed.error.issues[0] as (typeof parsed.error.issues)[number], row.type);
    const shown = raw.length > 40 ? `${raw.slice(0, 40)}…` : raw;
    this.problems.add(
      variable(row),
      row.hidden ? `${row.env} is invalid: ${text}.` : `${row.env}="${shown}" is invalid: ${text}.`,
    );
    return undefined;
  }
}

function defaultOf<T>(row: Setting<T>, context: DefaultContext): T {
  return typeof row.default === 'function'
    ? (row.default as (context: DefaultContext) => T)(context)
    : row.default;
}

function groupValues<Group extends Record<string, Setting<unknown>>>(
  group: Group,
  value: (row: Setting<unknown>) => unknown,
): Values<Group> {
  const entries = Object.entries(group).map(([key, row]) => {
    const found = value(row);
    return [key, typeof found === 'object' && found !== null ? Object.freeze({ ...found }) : found];
  });
  return Object.fromEntries(entries) as Values<Group>;
}

/** The file's shops, and SHOP_NAME's shop when the environment configures it or nothing else does. */
function configuredShops(
  sources: Sources,
  file: FileSettings | undefined,
  envShopName: string,
): Record<string, ShopConfig> {
  const shops: Record<string, ShopConfig> = {};
  for (const [name, section] of file?.shops ?? []) {
    const fromFile = file && { settings: file, section };
    shops[name] = shopFromSources(name, sources, name === envShopName, fromFile);
  }
  if (!shops[envShopName] && (sources.env.configuresShop() || Object.keys(shops).length === 0)) {
    shops[envShopName] = shopFromSources(envShopName, sources, true, undefined);
  }
  return shops;
}

/** The process's settings: the variable, else the file's key, else the default. */
function appValues(sources: Sources, file: FileSettings | undefined): Values<typeof APP> {
  return groupValues(APP, (row) => {
    const fromEnv = sources.env.value(row);
    if (fromEnv !== undefined) return fromEnv;
    const value = (row.fileKey && file?.top.get(row.fileKey)) ?? defaultOf(row, sources.context);
    // A file's paths mean what they say wherever the command is run from.
    return row.path ? path.resolve(file?.dir ?? sources.cwd, value as string) : value;
  });
}

/**
 * One shop's settings. `forEnvShop`: SHOP_NAME's shop, which the `shop`-scoped variables configure;
 * the `shops`-scoped ones apply to every shop.
 */
function shopFromSources(
  name: string,
  sources: Sources,
  forEnvShop: boolean,
  fromFile: FileShop | undefined,
): ShopConfig {
  const where = `shops.${name}`;
  const names = {} as Record<ConnectionKey, string>;
  const located = {} as Record<ConnectionKey, CredentialSource | undefined>;
  for (const [key, row] of Object.entries(CONNECTION) as [ConnectionKey, Setting<unknown>][]) {
    const found = locate(row, sources, forEnvShop, fromFile, where);
    names[key] = found.setting;
    located[key] = found.source;
  }
  const { baseUrl: baseUrlSource, ...credentials } = located;
  const values = groupValues(SHOP, (row) => {
    const fromEnv = row.scope === 'shops' || forEnvShop ? sources.env.value(row) : undefined;
    const key = row.fileKey;
    const fromFileValue =
      key === undefined
        ? undefined
        : (fromFile?.section.get(key) ?? (row.topLevelDefault ? fromFile?.settings.top.get(key) : undefined));
    return fromEnv ?? fromFileValue ?? defaultOf(row, sources.context);
  });
  const baseUrl = baseUrlSource?.value;
  if (baseUrl !== undefined) {
    const allowedByEnv = forEnvShop && sources.env.value(SHOP.allowInsecure) !== undefined;
    const allowInsecure =
      fromFile && !allowedByEnv
        ? `${where}.${SHOP.allowInsecure.fileKey}: true`
        : `${ALLOW_INSECURE_VARIABLE}=1`;
    sources.problems.check(() =>
      validateBaseUrl(baseUrl, values.allowInsecure, { baseUrl: names.baseUrl, allowInsecure }),
    );
  }
  return Object.freeze<ShopConfig>({
    ...values,
    name,
    baseUrl: baseUrl?.replace(/\/+$/, ''),
    credentials: Object.freeze(credentials),
    settingNames: Object.freeze(names),
  });
}

/**
 * Where one connection setting comes from, in order: `NAME` or `NAME_FILE` (SHOP_NAME's shop only),
 * the file's key or its `key_file`; each pair set together is a problem. When none is set, the name a
 * user would set: the variable, or the file's key (`_file` for secrets, which belong in files).
 */
function locate(
  row: Setting<unknown>,
  sources: Sources,
  forEnvShop: boolean,
  fromFile: FileShop | undefined,
  where: string,
): { setting: string; source: CredentialSource | undefined } {
  const fromEnv = forEnvShop ? sources.env.located(row) : undefined;
  if (fromEnv !== undefined) return fromEnv;
  if (!fromFile || row.fileKey === undefined) return { setting: variable(row), source: undefined };
  const key = `${where}.${row.fileKey}`;
  const value = fromFile.section.get(row.fileKey) as string | undefined;
  const file = row.fromFile ? (fromFile.section.get(`${row.fileKey}_file`) as string | undefined) : undefined;
  if (value !== undefined && file !== undefined)
    sources.problems.add(
      key,
      `${fromFile.settings.file}: settings "${key}" and "${key}_file" are both set: keep one of them.`,
    );
  if (value !== undefined) return { setting: key, source: { value } };
  if (file !== undefined)
    return { setting: `${key}_file`, source: { file: path.resolve(fromFile.settings.dir, file) } };
  return { setting: row.fromFile === 'secret' ? `${key}_file` : key, source: undefined };
}

/** OPS_USERNAME with OPS_PASSWORD (or its file), both or neither: half a login would lock nothing. */
function opsLoginSetting(env: EnvValues, problems: Problems): OpsLogin | null {
  const usernameVariable = variable(ACCESS.opsUsername);
  const passwordVariable = variable(ACCESS.opsPassword);
  const username = env.raw(usernameVariable);
  const password = env.located(ACCESS.opsPassword);
  if (username === undefined && password === undefined) return null;
  if (username === undefined) {
    problems.add(
      usernameVariable,
      `${usernameVariable} is not set: ${password?.setting} needs a user name beside it.`,
    );
  } else if (password === undefined) {
    problems.add(
      passwordVariable,
      `${passwordVariable} (or ${passwordVariable}_FILE) is not set: ${usernameVariable} needs a password beside it.`,
    );
  } else if (username.includes(':')) {
    problems.add(
      usernameVariable,
      `${usernameVariable} must not contain ":" (HTTP Basic authentication separates the password with it).`,
    );
  } else {
    return Object.freeze({ username, password });
  }
  return null;
}

function readSecretFile(file: string, setting: string): string {
  let value: string;
  try {
    value = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error).split('\n')[0];
    throw new ConfigError(setting, `${setting} names ${file}, which cannot be read (${code}).`);
  }
  if (value.trim() === '') throw new ConfigError(setting, `${setting} names ${file}, which is empty.`);
  return value;
}
