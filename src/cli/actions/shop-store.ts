import { existsSync } from 'node:fs';
import { type AppConfig, findShop, isShopName } from '../../config/app-config.js';
import { ConfigError } from '../../errors.js';
import { openStore, type Store } from '../../store/open.js';
import { shopPaths } from '../../store/paths.js';

/**
 * The shop a reading command (runs, diff, export, prune) looks at: a configured shop, or any shop
 * whose store is already in DATA_DIR (the demo's, or one whose config has since been removed), since
 * reading a store needs no marketplace settings.
 */
export function readableShop(config: AppConfig, name: string | undefined): string {
  if (name === undefined || config.shops[name]) return findShop(config, name).name;
  if (isShopName(name) && existsSync(shopPaths(config.dataDir, name).store)) return name;
  const known = Object.keys(config.shops).join(', ') || 'none';
  throw new ConfigError(
    '--shop',
    `Shop "${name}" is not configured (configured shops: ${known}) and DATA_DIR (${config.dataDir}) holds no store for it.`,
  );
}

/** The shop's store for a reading command, or undefined when the shop has never been synced. */
export function openExistingStore(config: AppConfig, shop: string): Store | undefined {
  const file = shopPaths(config.dataDir, shop).store;
  return existsSync(file) ? openStore(file) : undefined;
}

/** Where a shop that has never been synced was looked for, for messages. */
export function noStoreNote(config: AppConfig): string {
  return `no store in DATA_DIR ${config.dataDir}`;
}
