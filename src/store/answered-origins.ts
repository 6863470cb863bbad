import type { Store } from './open.js';

/**
 * Which base URLs (by origin: scheme, host and port, never credentials) gave this shop a complete run.
 * A process that never had an answer cannot tell a wrong port from an outage; the store can: failing
 * to reach an origin that completed a run here is an outage, retried within the budget.
 */
export function answeredBefore(store: Store, origin: string): boolean {
  return store.db.prepare('SELECT 1 FROM answered_origins WHERE origin = ?').get(origin) !== undefined;
}

/** Records that `origin` gave this shop complete run `run`. */
export function recordAnswered(store: Store, origin: string, run: number): void {
  store.db
    .prepare(
      `INSERT INTO answered_origins (origin, run) VALUES (?, ?)
       ON CONFLICT (origin) DO UPDATE SET run = excluded.run`,
    )
    .run(origin, run);
}
