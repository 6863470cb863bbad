import { setImmediate } from 'node:timers/promises';
import { UsageError } from '../errors.js';
import { endBulkLoad } from './bulk-load.js';
import type { Store } from './open.js';
import { statementsPerConnection } from './per-connection.js';

/**
 * `held`: the run read everything, but would have removed more items than allowed; its reading stays in
 * the store (until the next sync discards it), it retires nothing and is never resumed.
 */
export type RunStatus = 'complete' | 'held' | 'failed' | 'running';

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

/** Why an earlier attempt of a run stopped: when, its machine code (null when unknown) and its sentence. */
export interface AttemptError {
  at: string;
  code: string | null;
  message: string;
}

/**
 * One run of a shop as `shop-sync runs` shows it. `started_at` is when its first attempt started;
 * `resumed_at` when its latest attempt resumed it (null if never resumed); `error` says why its latest
 * attempt failed, `earlier_errors` why each earlier attempt stopped, oldest first.
 */
export interface RunSummary extends RunCounts {
  run: number;
  status: RunStatus;
  started_at: string;
  resumed_at: string | null;
  finished_at: string | null;
  attempts: number;
  error: string | null;
  earlier_errors: AttemptError[];
}

/** What the store remembers of a run beyond its summary: where to resume. */
export interface RunDetail extends RunSummary {
  query: string;
  heartbeat_at: string;
  checkpoint_page: number;
  resumed_from_page: number | null;
  error_code: string | null;
  /** The listing reader's own resume state (JSON), written with the pages it covers; null when none. */
  checkpoint: string | null;
}

const SUMMARY_COLUMNS = [
  'run',
  'status',
  'started_at',
  'resumed_at',
  'finished_at',
  'attempts',
  ...RUN_COUNT_FIELDS,
  'error',
  'earlier_errors',
].join(', ');

/** A `runs` row as SQLite returns it: `earlier_errors` is still its JSON text. */
type RunRow<T> = Omit<T, 'earlier_errors'> & { earlier_errors: string };

function fromRow<T extends RunSummary>(row: RunRow<T>): T;
function fromRow<T extends RunSummary>(row: RunRow<T> | undefined): T | undefined;
function fromRow<T extends RunSummary>(row: RunRow<T> | undefined): T | undefined {
  if (row === undefined) return undefined;
  return { ...row, earlier_errors: JSON.parse(row.earlier_errors) as AttemptError[] } as T;
}

export function listRuns(store: Store): RunSummary[] {
  const rows = store.db
    .prepare(`SELECT ${SUMMARY_COLUMNS} FROM runs ORDER BY run`)
    .all() as RunRow<RunSummary>[];
  return rows.map((row) => fromRow(row));
}

/** Statements a sync asks several times on one connection. */
const repeated = statementsPerConnection({
  summary: (db) => db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM runs WHERE run = ?`),
  previousComplete: (db) =>
    db.prepare("SELECT max(run) FROM runs WHERE status = 'complete' AND run < ?").pluck(),
});

export function getRun(store: Store, run: number): RunSummary | undefined {
  return fromRow(repeated(store.db).summary.get(run) as RunRow<RunSummary> | undefined);
}

export function getRunDetail(store: Store, run: number): RunDetail | undefined {
  return fromRow(
    store.db.prepare('SELECT * FROM runs WHERE run = ?').get(run) as RunRow<RunDetail> | undefined,
  );
}

export function latestCompleteRun(store: Store): number | null {
  return pluckRun(store, "SELECT max(run) FROM runs WHERE status = 'complete'");
}

/** Why the shop's latest finished run was held; null when it was not held. */
export function latestHeldReason(store: Store): string | null {
  const row = store.db
    .prepare("SELECT status, error FROM runs WHERE status IN ('complete', 'held') ORDER BY run DESC LIMIT 1")
    .get() as { status: RunStatus; error: string | null } | undefined;
  return row?.status === 'held' ? (row.error ?? '') : null;
}

/** The complete run before `run`: what `run` is diffed against. */
export function previousCompleteRun(store: Store, run: number): number | null {
  return (repeated(store.db).previousComplete.get(run) as number | null) ?? null;
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
  /** A resumed run's listing-reader state (`StagedPage.checkpoint` of its last staged page), if it kept one. */
  checkpoint?: string;
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
      // A first sync that stopped in its bulk load left the store without its index of ids.
      endBulkLoad(db);
      const latest = fromRow(
        db.prepare('SELECT * FROM runs ORDER BY run DESC LIMIT 1').get() as RunRow<RunDetail> | undefined,
      );
      if (latest && isResumable(latest, options, now)) {
        const startPage = latest.checkpoint_page + 1;
        // The attempt that stopped keeps its reason: the resumed run may still complete, and `runs` must
        // not then pretend it went through in one go.
        const earlier = [...latest.earlier_errors, stoppedAttempt(latest)];
        db.prepare(
          `UPDATE runs SET status = 'running', finished_at = NULL, error = NULL, error_code = NULL,
             heartbeat_at = @now, resumed_at = @now, attempts = attempts + 1, earlier_errors = @earlier,
             resumed_from_page = @startPage WHERE run = @run`,
        ).run({ now, startPage, run: latest.run, earlier: JSON.stringify(earlier) });
        const start: RunStart = { run: latest.run, startPage, resumed: true };
        if (latest.checkpoint !== null) start.checkpoint = latest.checkpoint;
        return start;
      }
      db.prepare(
        `UPDATE runs SET status = 'failed', finished_at = coalesce(finished_at, ?),
           error = coalesce(error, ?), error_code = coalesce(error_code, 'INTERRUPTED') WHERE status = 'running'`,
      ).run(now, UNRECORDED_STOP);
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

/**
 * What ended an attempt that did not record why: its process was killed or crashed (or lost the disk)
 * while the run was running.
 */
const UNRECORDED_STOP = 'interrupted';

/** Why the latest attempt of `run` stopped, for its `earlier_errors`. */
function stoppedAttempt(run: RunDetail): AttemptError {
  if (run.status === 'failed' && run.error !== null)
    return { at: run.finished_at ?? run.heartbeat_at, code: run.error_code, message: run.error };
  return { at: run.heartbeat_at, code: 'INTERRUPTED', message: UNRECORDED_STOP };
}

function isResumable(latest: RunDetail, options: BeginRunOptions, now: string): boolean {
  if (latest.status === 'complete' || latest.status === 'held' || latest.query !== options.query)
    return false;
  const ageMs = Date.parse(now) - Date.parse(latest.heartbeat_at);
  return ageMs < options.resumeWindowMinutes * 60_000;
}

/**
 * Records why a run stopped (`code`: the error's machine code, when it has one); its staged items stay
 * so that a prompt retry can resume it.
 */
export function failRun(
  store: Store,
  run: number,
  reason: string,
  now = new Date(),
  code: string | null = null,
): void {
  store.db
    .prepare(
      "UPDATE runs SET status = 'failed', finished_at = ?, error = ?, error_code = ? WHERE run = ? AND status = 'running'",
    )
    .run(now.toISOString(), reason, code, run);
}

/**
 * Marks a run that read everything held: its counts are what completing it would have made, `reason`
 * the sentence that says why it was not. Like a failed run's, what it wrote is discarded by the next
 * sync, so it never becomes a snapshot.
 */
export function holdRun(
  store: Store,
  run: number,
  counts: RunCounts,
  reason: string,
  now = new Date(),
): void {
  store.db
    .prepare(
      `UPDATE runs SET status = 'held', finished_at = @now, heartbeat_at = @now, error = @reason,
         error_code = 'REMOVALS_HELD', items = @items, added = @added, updated = @updated,
         removed = @removed, invalid = @invalid WHERE run = @run AND status = 'running'`,
    )
    .run({ ...counts, run, reason, now: now.toISOString() });
}

/** Rows deleted per transaction when a run's data is discarded: short enough not to block the event loop. */
const DISCARD_SLICE = 2000;

/**
 * Deletes what a run wrote that no reader will ever need: its `run_matched` rows; after a complete run,
 * the listing bodies it did not receive (the listing has moved on from them); and for a run that will
 * never complete its versions and invalid items too, reopening the versions it closed. Slice by
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
  if (options.complete) {
    // A body first, then its run: a process stopped between them leaves runs without bodies, older
    // than any later run, which its discard drops (or a body given the same number overwrites).
    statements.push(
      db.prepare(
        `DELETE FROM listing_bodies WHERE body IN (
           SELECT r.body FROM listing_body_runs r
            WHERE r.run < @run AND EXISTS (SELECT 1 FROM listing_bodies b WHERE b.body = r.body) LIMIT @limit)`,
      ),
      db.prepare(
        'DELETE FROM listing_body_runs WHERE body IN (SELECT body FROM listing_body_runs WHERE run < @run LIMIT @limit)',
      ),
    );
  } else {
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
