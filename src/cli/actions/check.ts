import { existsSync } from 'node:fs';
import { MarketplaceClient } from '../../api/client.js';
import { requireConnection, type ShopConfig } from '../../config/app-config.js';
import type { StoreError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { shopPaths } from '../../store/paths.js';
import { checkStore } from '../../store/verify.js';
import { commandContext } from '../context.js';
import { forEachShop, type ShopChoice } from '../each-shop.js';
import { type CliIO, writeLine } from '../io.js';

export interface CheckFlags extends ShopChoice {
  json?: boolean;
}

/** What `check` found for one shop. */
interface CheckResult {
  shop: string;
  ok: boolean;
  base_url: string | null;
  /** The page size asked for. */
  per_page: number;
  /** The items the server really served on the first page. */
  page_size: number | null;
  /** What `PRAGMA quick_check` says of the shop's store: `none` before its first sync. */
  store: StoreState;
  error: string | null;
}

type StoreState = 'ok' | 'none' | 'corrupt' | 'unreadable';

/** `check`: each chosen shop's store checked, then a login and its first page; one line (or JSON object) per shop. */
export async function checkAction(io: CliIO, flags: CheckFlags): Promise<void> {
  const { config, log } = commandContext(io);
  const print = (result: CheckResult) =>
    writeLine(io.stdout, flags.json ? JSON.stringify(result) : resultText(result));
  // Every shop checked gets its line, a failed one too; the command then fails as the check did.
  const checkAndPrint = async (shop: ShopConfig) => {
    let store: StoreState = 'none';
    try {
      // The store first: it is local and quick, and a damaged one fails every sync whatever the marketplace says.
      const verified = await verifyStore(shopPaths(config.dataDir, shop.name).store);
      store = verified.state;
      if (verified.error) throw verified.error;
      print({ ...(await checkShop(shop, config.retryBudgetSeconds, log, io.signal)), store });
    } catch (error) {
      // One shop's failure is the command's error, said once on stderr; a report of several shops, or
      // one for a machine, still gives the failed shop its line.
      if (error instanceof Error && (flags.json || flags.all)) print({ ...failure(shop, error), store });
      throw error;
    }
  };
  await forEachShop(config, flags, checkAndPrint, () => undefined);
}

/**
 * The store's state, or the error that says what is wrong with it and what to do. It only reads the
 * file: a store that was never written is `none`.
 */
async function verifyStore(file: string): Promise<{ state: StoreState; error?: StoreError }> {
  if (!existsSync(file)) return { state: 'none' };
  const health = await checkStore(file);
  if (health.status === 'ok') return { state: 'ok' };
  return { state: health.status === 'corrupt' ? 'corrupt' : 'unreadable', error: health.error };
}

async function checkShop(
  shop: ShopConfig,
  budgetSeconds: number,
  log: Logger,
  signal: AbortSignal,
): Promise<CheckResult> {
  const connection = requireConnection(shop);
  const client = new MarketplaceClient({
    ...connection,
    logger: log.child({ shop: shop.name }),
    retry: { budgetMs: budgetSeconds * 1000 },
    signal,
  });
  try {
    const page = await client.firstPage({
      perPage: shop.perPage,
      order: shop.order,
      locale: shop.locale,
      filters: shop.filters,
    });
    return { ...failure(shop, null), ok: true, base_url: connection.baseUrl, page_size: page.received };
  } finally {
    await client.close();
  }
}

function failure(shop: ShopConfig, error: Error | null): CheckResult {
  return {
    shop: shop.name,
    ok: false,
    base_url: shop.baseUrl ?? null,
    per_page: shop.perPage,
    page_size: null,
    store: 'none',
    error: error?.message ?? null,
  };
}

function resultText(r: CheckResult): string {
  if (!r.ok) return `Shop ${r.shop}: FAILED: ${r.error}`;
  const size =
    r.page_size === r.per_page
      ? `${r.page_size} items, as asked`
      : `${r.page_size} items (asked for ${r.per_page}: the server serves at most ${r.page_size} a page, or the shop has no more)`;
  const store = r.store === 'ok' ? 'the store is intact' : 'no store yet (the first sync makes it)';
  return `Shop ${r.shop}: OK: logged in at ${r.base_url}; the first page has ${size}; ${store}.`;
}
