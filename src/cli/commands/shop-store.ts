import { existsSync } from 'node:fs';
import { type AppConfig, findShop } from '../../config.js';
import { openStore, type Store } from '../../store/open.js';
import { shopPaths } from '../../store/paths.js';

const SHOP_NAME = /^[A-Za-z0-9_-]+$/;

/**
 * The shop a reading command (runs, diff, export, prune) looks at: a configured shop, or any shop
 * whose store is already in DATA_DIR (the demo's, or one whose config has since been removed), since
 * reading a store needs no marketplace settings.
 */
export function readableShop(config: AppConfig, name: string | undefined): string {
  if (name !== undefined && !config.shops[name] && SHOP_NAME.test(name)) {
    if (existsSync(shopPaths(config.dataDir, name).store)) return name;
  }
  return findShop(config, name).name;
}

/** The shop's store for a reading command, or undefined when the shop has never been synced. */
export function openExistingStore(config: AppConfig, shop: string): Store | undefined {
  const file = shopPaths(config.dataDir, shop).store;
  return existsSync(file) ? openStore(file) : undefined;
}
