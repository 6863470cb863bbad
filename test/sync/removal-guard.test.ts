import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/app-config.js';
import type { RemovalLimit } from '../../src/config/setting-types.js';
import { heldBecause } from '../../src/sync/removal-guard.js';

/** The shop's limit as the loader makes it from SYNC_MAX_REMOVED (unset: the default). */
function limit(value?: string): RemovalLimit {
  const env: Record<string, string> = { DATA_DIR: '/tmp/none', SHOP_NAME: 'shop' };
  if (value !== undefined) env.SYNC_MAX_REMOVED = value;
  const shop = loadConfig(env).shops.shop;
  if (!shop) throw new Error('the environment configures shop "shop"');
  return shop.maxRemoved;
}

it('holds by default only above 10 % of the shop and above 10 items', () => {
  expect(heldBecause(5, limit(), 10, 20)).toBeNull();
  expect(heldBecause(5, limit(), 11, 110)).toBeNull();
  expect(heldBecause(5, limit(), 12, 110)).toBe(
    'run 5 would remove 12 of 110 items (11 %), more than SYNC_MAX_REMOVED allows by default (10 % and 10 items): held; the feeds are unchanged',
  );
});

it('holds above a count, above a share, and never with none or without a complete run before', () => {
  expect(heldBecause(2, limit('500'), 500, 500)).toBeNull();
  expect(heldBecause(2, limit('500'), 501, 100_000)).toContain(
    'would remove 501 of 100,000 items (1 %), more than SYNC_MAX_REMOVED=500: held',
  );
  expect(heldBecause(2, limit('10%'), 1, 9)).toContain('(11 %), more than SYNC_MAX_REMOVED=10%: held');
  expect(heldBecause(2, limit('10%'), 1, 10)).toBeNull();
  expect(heldBecause(2, limit('none'), 5000, 5000)).toBeNull();
  expect(heldBecause(1, limit(), 0, null)).toBeNull();
});

it('never rounds a share that is not all of the shop, or not none of it, to 100 % or 0 %', () => {
  expect(heldBecause(3, limit('5'), 9_999, 10_000)).toContain('9,999 of 10,000 items (> 99 %)');
  expect(heldBecause(3, limit('5'), 6, 10_000)).toContain('6 of 10,000 items (< 1 %)');
});
