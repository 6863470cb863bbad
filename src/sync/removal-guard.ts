import type { RemovalLimit } from '../config/setting-types.js';
import { SHOP, variable } from '../config/settings.js';

/**
 * A listing that suddenly answers `[]`, or a fraction of the shop, is far more often a fault on the
 * marketplace's side than a shop that sold out between two syncs; confirming the removals only reads
 * the same wrong answer again. A run that would remove more than `limit` allows is held instead of
 * published. Returns the sentence that says so, or null when the run may complete.
 *
 * `removed` is what the run would remove, `of` the items of the last complete run (null: there is none,
 * so nothing can be removed).
 */
export function heldBecause(
  run: number,
  limit: RemovalLimit,
  removed: number,
  of: number | null,
): string | null {
  if (of === null || !exceeds(limit, removed, of)) return null;
  return `run ${run} would remove ${count(removed)} of ${count(of)} items (${share(removed, of)} %), more than ${allowed(limit)}: held; the feeds are unchanged`;
}

/** Above every bound the limit gives; a limit without bounds (`none`) is never exceeded. */
function exceeds(limit: RemovalLimit, removed: number, of: number): boolean {
  if (limit.items === undefined && limit.percent === undefined) return false;
  const aboveItems = limit.items === undefined || removed > limit.items;
  const aboveShare = limit.percent === undefined || removed * 100 > limit.percent * of;
  return aboveItems && aboveShare;
}

const SETTING = variable(SHOP.maxRemoved);

function allowed(limit: RemovalLimit): string {
  if (limit.written !== undefined) return `${SETTING}=${limit.written}`;
  return `${SETTING} allows by default (${limit.percent} % and ${limit.items} items)`;
}

const count = (n: number) => n.toLocaleString('en-US');

/** Whole percents, but never 0 or 100 for a share that is neither. */
function share(part: number, whole: number): string {
  const rounded = Math.round((part * 100) / whole);
  if (rounded === 0 && part > 0) return '< 1';
  if (rounded === 100 && part < whole) return '> 99';
  return String(rounded);
}
