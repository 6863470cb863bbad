import path from 'node:path';
import { type RunEnded, summaryJson } from '../sync/index.js';

/** The events a notification tells: a run complete, held (SYNC_MAX_REMOVED) or failed. */
export const NOTIFY_EVENTS = ['sync.complete', 'sync.held', 'sync.failed'] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/**
 * One notification, ready to send: its raw body is fixed here, once, so that every retry sends (and
 * signs) the same bytes under the same delivery id.
 */
export interface Notification {
  readonly shop: string;
  readonly event: NotifyEvent;
  /** `<shop>:<run>:<event>`: receivers deduplicate on it (`X-Shop-Sync-Delivery`). */
  readonly delivery: string;
  readonly body: string;
}

/**
 * The contract's notification of a run that ended: the `sync --json` object plus `event`, `finished_at`,
 * `error` and `feeds` (the feeds folder relative to DATA_DIR). Built from counts, names and the error's
 * sentence only, which never hold a secret; the sentence is the one the CLI prints.
 */
export function notificationOf(ended: RunEnded): Notification {
  const finished_at = ended.finishedAt.toISOString();
  if (ended.status !== 'failed') {
    const s = ended.summary;
    // A held run published nothing: its feeds are the previous run's, and its sentence says why.
    const held = s.status === 'held';
    const event: NotifyEvent = held ? 'sync.held' : 'sync.complete';
    const body = {
      ...summaryJson(s),
      event,
      finished_at,
      error: held ? s.held : null,
      feeds: held ? null : path.posix.join(s.shop, 'feeds'),
    };
    return { shop: s.shop, event, delivery: deliveryId(s.shop, s.run, event), body: JSON.stringify(body) };
  }
  const event: NotifyEvent = 'sync.failed';
  const body = {
    shop: ended.shop,
    run: ended.run,
    status: 'failed',
    pages: ended.progress?.pages ?? 0,
    items: ended.progress?.items ?? 0,
    added: 0,
    updated: 0,
    removed: 0,
    invalid: ended.progress?.invalid ?? 0,
    duration_ms: ended.duration_ms,
    event,
    finished_at,
    error: ended.error.message,
    feeds: null,
  };
  // The contract's `<shop>:<run>:<event>` literally, `null` for a failure before any run began: such
  // failures (a store that cannot be opened) repeat until fixed, and one of them told is enough.
  return {
    shop: ended.shop,
    event,
    delivery: deliveryId(ended.shop, ended.run, event),
    body: JSON.stringify(body),
  };
}

function deliveryId(shop: string, run: number | null, event: NotifyEvent): string {
  return `${shop}:${run}:${event}`;
}
