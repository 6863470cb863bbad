import type { Store } from './open.js';
import { latestCompleteRun } from './runs.js';

/** The run the published feeds reflect. */
export function publishedRun(store: Store): number | null {
  return latestCompleteRun(store);
}
