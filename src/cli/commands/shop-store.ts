import { existsSync } from 'node:fs';
import type { AppConfig } from '../../config.js';
import { openStore, type Store } from '../../store/open.js';
import { shopPaths } from '../../store/paths.js';

/** The shop's store for a reading command, or undefined when the shop has never been synced. */
export function openExistingStore(config: AppConfig, shop: string): Store | undefined {
  const file = shopPaths(config.dataDir, shop).store;
  return existsSync(file) ? openStore(file) : undefined;
}
