/** What the CLI, the worker and the notifications use of the sync: one sync of one shop, and its outcome. */
export { SharedPools } from '../api/client.js';
export type { SyncDeps } from './deps.js';
export {
  failedJson,
  type HeldSummary,
  heldError,
  type RunEnded,
  type SyncPhase,
  type SyncPoint,
  type SyncProgress,
  type SyncSummary,
  summaryJson,
} from './outcome.js';
export { publishFeeds } from './publish-feeds.js';
export { runSync } from './run-sync.js';
