import { setImmediate } from 'node:timers/promises';
import { UsageError } from '../errors.js';
import type { Store } from './open.js';

export type RunStatus = 'complete' | 'failed' | 'running';

/** What a run counted: the sync summary and the runs listing are both built from it. */
export interface RunCounts {
  pages: number;
  items: number;
  added: number;
  updated: number;
  removed: number;
  invalid: number;
}

/** The counts in the order the contract shows them; also the `runs` table's columns of the same names. */
export const RUN_COUNT_FIELDS: readonly (keyof RunCounts)[] = [
  'pages',
  'items',
  'added',
  'updated',
  'removed',
  'invalid',
];

/** One run of a shop as `shop-sync runs` shows it; `error` says why a failed run stopped. */
export interface RunSummary extends RunCounts {
  run: number;
  status: RunStatus;
  started_at: string;
  finished_at: string | null;
  error: string | null;
}

/** What the store remembers of a run beyond its summary: where to resume. */
export interface RunDetail extends RunSummary {
  query: string;
  heartbeat_at: string;
  checkpoint_page: number;
  resumed_from_page: number | null;
  /** The listing reader's checkpoint (JSON), where a resumed run reads on from. */
  checkpoint: string | null;
}

const SUMMARY_COLUMNS = ['run', 'status', 'started_at', 'finished_at', ...RUN_COUNT_FIELDS, 'error'].join(
  ', ',
);

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

/** How a command words a run it cannot use; each command keeps its own sentence. */
export interface CompleteRunMessages {
  missing(run: number): string;
  incomplete(run: number, status: RunStatus): string;
}

/** The summary of `run` if it is complete; otherwise a `UsageError` worded by `messages`. */
export function requireCompleteRun(store: Store, run: number, messages: CompleteRunMessages): RunSummary {
  const summary = getRun(store, run);
  if (!summary) throw new UsageError(messages.missing(run));
  if (summary.status !== 'complete') throw new UsageError(messages.incomplete(run, summary.status));
  return summary;
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
  /** Where a resumed run's reading stood (the reader's JSON), if anywhere. */
  checkpoint: string | null;
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
 * query. Any other unfinished run is marked failed: nothing will resume it, and `discardUnfinishedRuns`
 * deletes what it wrote. Call while holding the shop's lease.
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
        return { run: latest.run, startPage, resumed: true, checkpoint: latest.checkpoint };
      }
      db.prepare(
        "UPDATE runs SET status = 'failed', finished_at = coalesce(finished_at, ?), error = coalesce(error, 'interrupted') WHERE status = 'running'",
      ).run(now);
      const run = db
        .prepare(
          "INSERT INTO runs (status, query, started_at, heartbeat_at) VALUES ('running', ?, ?, ?) RETURNING run",
        )
        .pluck()
        .get(options.query, now, now) as number;
      return { run, startPage: 1, resumed: false, checkpoint: null };
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

/** Rows deleted per transaction when a run's data is discarded: short enough not to block the event loop. */
const DISCARD_SLICE = 2000;

/**
 * Deletes what a run wrote that no reader will ever need: its `run_matched` rows, and for a run that
 * will never complete its versions and invalid items too, reopening the versions it closed. Slice by
 * slice, yielding to the event loop between them; a process killed half way leaves rows that the next
 * sync discards.
 */
export async function discardRunData(
  store: Store,
  run: number,
  options: { complete: boolean },
): Promise<void> {
  const { db } = store;
  const statements = [
    db.prepare(
      'DELETE FROM run_matched WHERE run = @run AND version IN (SELECT version FROM run_matched WHERE run = @run LIMIT @limit)',
    ),
  ];
  // Usually the run's rows are all there is: SQLite empties a whole table by its pages, not row by row.
  const onlyThisRun = db.prepare('SELECT NOT EXISTS (SELECT 1 FROM run_matched WHERE run <> ?)').pluck();
  if (onlyThisRun.get(run) === 1) db.prepare('DELETE FROM run_matched').run();
  if (!options.complete) {
    statements.push(
      db.prepare(
        'DELETE FROM item_versions WHERE rowid IN (SELECT rowid FROM item_versions WHERE valid_from_run = @run LIMIT @limit)',
      ),
      db.prepare(
        'UPDATE item_versions SET valid_to_run = NULL WHERE rowid IN (SELECT rowid FROM item_versions WHERE valid_to_run = @run LIMIT @limit)',
      ),
      db.prepare(
        'DELETE FROM invalid_items WHERE rowid IN (SELECT rowid FROM invalid_items WHERE run = @run LIMIT @limit)',
      ),
    );
  }
  for (const statement of statements) {
    while (statement.run({ run, limit: DISCARD_SLICE }).changes > 0) await setImmediate();
  }
}

/**
 * Cleans up after every run that will not be resumed: unfinished runs other than `current` lose what
 * they wrote (their `runs` row stays, with its error), complete runs their leftover `run_matched` rows.
 */
export async function discardUnfinishedRuns(store: Store, current: number): Promise<number[]> {
  const runs = store.db
    .prepare(
      `SELECT run, status = 'complete' FROM runs WHERE run <> ? AND (
         status <> 'complete' AND (EXISTS (SELECT 1 FROM item_versions WHERE valid_from_run = runs.run)
                                   OR EXISTS (SELECT 1 FROM item_versions WHERE valid_to_run = runs.run)
                                   OR EXISTS (SELECT 1 FROM invalid_items WHERE invalid_items.run = runs.run))
         OR EXISTS (SELECT 1 FROM run_matched WHERE run_matched.run = runs.run))`,
    )
    .raw()
    .all(current) as [number, 0 | 1][];
  for (const [run, complete] of runs) await discardRunData(store, run, { complete: complete === 1 });
  return runs.filter(([, complete]) => complete === 0).map(([run]) => run);
}
