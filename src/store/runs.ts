import type { Store } from './open.js';

export type RunStatus = 'complete' | 'failed' | 'running';

/** One run of a shop as `shop-sync runs` shows it. */
export interface RunSummary {
  run: number;
  status: RunStatus;
  started_at: string;
  finished_at: string | null;
  pages: number;
  items: number;
  added: number;
  updated: number;
  removed: number;
  invalid: number;
  /** Why the run did not complete; null for a complete or running run. */
  error: string | null;
}

/** What the store remembers of a run beyond its summary: where to resume and why it stopped. */
export interface RunDetail extends RunSummary {
  query: string;
  heartbeat_at: string;
  checkpoint_page: number;
  resumed_from_page: number | null;
}

const SUMMARY_COLUMNS =
  'run, status, started_at, finished_at, pages, items, added, updated, removed, invalid, error';

export function listRuns(store: Store): RunSummary[] {
  return store.db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM runs ORDER BY run`).all() as RunSummary[];
}

export function getRun(store: Store, run: number): RunSummary | undefined {
  return store.db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM runs WHERE run = ?`).get(run) as
    | RunSummary
    | undefined;
}

export function getRunDetail(store: Store, run: number): RunDetail | undefined {
  return store.db.prepare('SELECT * FROM runs WHERE run = ?').get(run) as RunDetail | undefined;
}

export function latestCompleteRun(store: Store): number | null {
  return pluckRun(store, "SELECT max(run) FROM runs WHERE status = 'complete'");
}

/** The complete run before `run`: what `run` is diffed against. */
export function previousCompleteRun(store: Store, run: number): number | null {
  return pluckRun(store, "SELECT max(run) FROM runs WHERE status = 'complete' AND run < ?", run);
}

export function completeRunCount(store: Store): number {
  return store.db.prepare("SELECT count(*) FROM runs WHERE status = 'complete'").pluck().get() as number;
}

function pluckRun(store: Store, sql: string, ...params: number[]): number | null {
  return (
    (store.db
      .prepare(sql)
      .pluck()
      .get(...params) as number | null) ?? null
  );
}

export interface RunStart {
  run: number;
  /** The first page to read: 1 for a new run, the page after the checkpoint for a resumed one. */
  startPage: number;
  resumed: boolean;
}

export interface BeginRunOptions {
  /** Identifies what is read (page size, order, filters): a checkpoint is only valid for the same query. */
  query: string;
  /** An interrupted run whose last sign of life is younger than this is resumed; 0 never resumes. */
  resumeWindowMinutes: number;
  now?: Date;
}

/**
 * Starts a run, or resumes the latest one if it was interrupted recently while reading the same
 * query. Any other unfinished run is marked failed and its staged items dropped: nothing will resume it.
 * Call while holding the shop's lease.
 */
export function beginRun(store: Store, options: BeginRunOptions): RunStart {
  const now = (options.now ?? new Date()).toISOString();
  const { db } = store;
  return db
    .transaction((): RunStart => {
      const latest = db.prepare('SELECT * FROM runs ORDER BY run DESC LIMIT 1').get() as
        | RunDetail
        | undefined;
      if (latest && isResumable(latest, options, now)) {
        const startPage = latest.checkpoint_page + 1;
        db.prepare(
          `UPDATE runs SET status = 'running', finished_at = NULL, error = NULL, heartbeat_at = ?,
             resumed_from_page = ? WHERE run = ?`,
        ).run(now, startPage, latest.run);
        return { run: latest.run, startPage, resumed: true };
      }
      db.prepare(
        "UPDATE runs SET status = 'failed', finished_at = coalesce(finished_at, ?), error = coalesce(error, 'interrupted') WHERE status = 'running'",
      ).run(now);
      db.prepare(
        "DELETE FROM staged_items WHERE run IN (SELECT run FROM runs WHERE status = 'failed')",
      ).run();
      const run = db
        .prepare(
          "INSERT INTO runs (status, query, started_at, heartbeat_at) VALUES ('running', ?, ?, ?) RETURNING run",
        )
        .pluck()
        .get(options.query, now, now) as number;
      return { run, startPage: 1, resumed: false };
    })
    .immediate();
}

function isResumable(latest: RunDetail, options: BeginRunOptions, now: string): boolean {
  if (latest.status === 'complete' || latest.query !== options.query) return false;
  const ageMs = Date.parse(now) - Date.parse(latest.heartbeat_at);
  return ageMs < options.resumeWindowMinutes * 60_000;
}

/** Records why a run stopped; its staged items stay so that a prompt retry can resume it. */
export function failRun(store: Store, run: number, reason: string, now = new Date()): void {
  store.db
    .prepare(
      "UPDATE runs SET status = 'failed', finished_at = ?, error = ? WHERE run = ? AND status = 'running'",
    )
    .run(now.toISOString(), reason, run);
}
