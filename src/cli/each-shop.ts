import { Option } from 'commander';
import { type AppConfig, findShop, type ShopConfig } from '../config/app-config.js';
import { InterruptedError, ShopsFailedError } from '../errors.js';

export interface ShopChoice {
  shop?: string;
  all?: boolean;
}

/** `--shop NAME | --all`, the pair every command over configured shops offers. */
export function shopOptions(): Option[] {
  return [
    new Option('--shop <name>', 'the shop (default: the configured one)').conflicts('all'),
    new Option('--all', 'every configured shop, one after another'),
  ];
}

/**
 * Runs `work` for the chosen shops. One shop: its error is the command's. `--all`: each shop's
 * outcome is reported as it ends, the others still run, and the command fails at the end if any did;
 * a stop request (Ctrl-C) ends the whole command at once.
 */
export async function forEachShop<T>(
  config: AppConfig,
  choice: ShopChoice,
  work: (shop: ShopConfig) => Promise<T>,
  reportFailure: (shop: ShopConfig, error: Error) => void,
): Promise<void> {
  if (!choice.all) {
    await work(findShop(config, choice.shop));
    return;
  }
  const shops = Object.values(config.shops);
  const failed: string[] = [];
  for (const shop of shops) {
    try {
      await work(shop);
    } catch (error) {
      if (error instanceof InterruptedError || !(error instanceof Error)) throw error;
      failed.push(shop.name);
      reportFailure(shop, error);
    }
  }
  if (failed.length > 0) {
    throw new ShopsFailedError(`${failed.length} of ${shops.length} shops failed: ${failed.join(', ')}.`);
  }
}
