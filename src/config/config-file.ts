import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { issueText, knownKeys, type Problems, unknownKeyHint } from './config-problems.js';
import { parseConfigText } from './config-text.js';
import { isShopName, type SettingType, SHOP_NAME_RULE, text } from './setting-types.js';
import { APP, CONNECTION, type Setting, SHOP, SOURCES, variable } from './settings.js';

/** One mapping of a config file, its values checked: file key to value. */
export type Section = ReadonlyMap<string, unknown>;

/** A config file's settings, checked against the rows: the top level, and each shop's. */
export interface FileSettings {
  readonly file: string;
  /** Relative paths in the file (`data_dir`, `*_file`) resolve against its folder. */
  readonly dir: string;
  readonly top: Section;
  readonly shops: ReadonlyMap<string, Section>;
}

/** A key's type: its row's, or text for the `key_file` of a setting that may come from a file. */
function keyTypes(rows: readonly Setting<unknown>[]): ReadonlyMap<string, SettingType<unknown>> {
  const types = new Map<string, SettingType<unknown>>();
  for (const row of rows) {
    if (row.fileKey === undefined) continue;
    types.set(row.fileKey, row.type);
    if (row.fromFile) types.set(`${row.fileKey}_file`, text);
  }
  return types;
}

const SHOPS_KEY = 'shops';
const TOP_KEYS = keyTypes([
  ...Object.values(APP),
  ...Object.values(SHOP).filter((row) => row.topLevelDefault),
]);
const SHOP_KEYS = keyTypes([...Object.values(CONNECTION), ...Object.values(SHOP)]);

/** The file SHOP_SYNC_CONFIG names, read and checked; every problem in it is kept, not just the first. */
export function readConfigFile(file: string, problems: Problems): FileSettings {
  const empty: FileSettings = { file, dir: path.dirname(file), top: new Map(), shops: new Map() };
  const setting = variable(SOURCES.configFile);
  if (!existsSync(file)) {
    problems.add(setting, `${setting} names ${file}, which does not exist.`);
    return empty;
  }
  let data: unknown;
  try {
    data = parseConfigText(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    problems.add(setting, `${file} is not valid YAML or JSON: ${reason}`);
    return empty;
  }
  const reader = new SectionReader(file, problems);
  const top = reader.mapping(data ?? {}, '(top level)');
  if (!top) return empty;
  const { [SHOPS_KEY]: shopsValue, ...topValues } = top;
  const topSection = reader.section(topValues, TOP_KEYS, '', [SHOPS_KEY]);
  const shops = new Map<string, Section>();
  const shopMappings = shopsValue === undefined ? {} : reader.mapping(shopsValue, SHOPS_KEY);
  for (const [name, value] of Object.entries(shopMappings ?? {})) {
    const where = `${SHOPS_KEY}.${name}`;
    if (!isShopName(name)) {
      problems.add(where, `${file}: shop name "${name}" is invalid: expected ${SHOP_NAME_RULE}.`);
      continue;
    }
    const shop = reader.mapping(value, where);
    if (shop) shops.set(name, reader.section(shop, SHOP_KEYS, `${where}.`));
  }
  return { ...empty, top: topSection, shops };
}

/** Checks the mappings of one file, naming each setting by its path in the file. */
class SectionReader {
  constructor(
    private readonly file: string,
    private readonly problems: Problems,
  ) {}

  mapping(value: unknown, where: string): Record<string, unknown> | undefined {
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
    this.invalid(where, 'expected a mapping of settings');
    return undefined;
  }

  section(
    values: Record<string, unknown>,
    types: ReadonlyMap<string, SettingType<unknown>>,
    prefix: string,
    otherKeys: readonly string[] = [],
  ): Section {
    const section = new Map<string, unknown>();
    for (const [key, value] of Object.entries(values)) {
      const type = types.get(key);
      if (type === undefined) {
        this.unknown(`${prefix}${key}`, key, [...types.keys(), ...otherKeys]);
        continue;
      }
      const parsed = this.value(value, type, `${prefix}${key}`);
      if (parsed !== undefined) section.set(key, parsed);
    }
    return section;
  }

  private value(value: unknown, type: SettingType<unknown>, where: string): unknown {
    const parsed = type.schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      const at = [where, ...issue.path.map(String)].join('.');
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) this.unknown(`${at}.${key}`, key, knownKeys(type));
      } else {
        this.invalid(at, issueText(issue, type));
      }
    }
    return undefined;
  }

  private invalid(where: string, text: string): void {
    this.problems.add(where, `${this.file}: setting "${where}" is invalid: ${text}.`);
  }

  private unknown(where: string, key: string, known: readonly string[]): void {
    this.problems.add(where, `${this.file}: setting "${where}" is unknown; ${unknownKeyHint(key, known)}`);
  }
}
