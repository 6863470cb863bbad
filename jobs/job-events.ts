import { type Job, UnrecoverableError, type Worker } from 'bullmq';
import type { Logger } from '../src/log.js';
import type { SyncSummary } from '../src/sync/index.js';
import { errorCode, logErrors } from './log-errors.js';

/** What became of a job, for whoever watches the worker (logs, the ops port's metrics). */
export interface JobOutcome {
  readonly shop: string;
  readonly job: string | undefined;
  readonly outcome: 'completed' | 'failed' | 'retrying';
  /** The sync's summary when it completed. */
  readonly summary?: SyncSummary;
  /** The failure's reason and its machine code (`CREDENTIALS_REJECTED`, `BUG` for an unexpected error). */
  readonly reason?: string;
  readonly code?: string;
}

export type OutcomeListener = (outcome: JobOutcome) => void;

/** Whoever listens for the syncs' outcomes; listeners may join after the workers have started. */
export class Outcomes {
  private readonly listeners: OutcomeListener[] = [];

  listen(listener: OutcomeListener): void {
    this.listeners.push(listener);
  }

  emit(outcome: JobOutcome): void {
    for (const listener of this.listeners) listener(outcome);
  }
}

/** The shop a job names, as far as it names one (a job that names none fails, saying so). */
function shopOf(job: Job): string {
  const shop = (job.data as { shop?: unknown } | undefined)?.shop;
  return typeof shop === 'string' ? shop : '';
}

/** Logs the sync worker's job events as JSON lines and tells `outcomes` how each job ended. */
export function followSyncJobs(worker: Worker, log: Logger, outcomes: Outcomes): void {
  const fields = (job: Job) => ({ job: job.id, name: job.name, shop: shopOf(job) });
  worker.on('active', (job) => log.info({ ...fields(job), attempt: job.attemptsMade + 1 }, 'job started'));
  worker.on('completed', (job, summary: SyncSummary) => {
    log.info(fields(job), 'job completed');
    outcomes.emit({ shop: shopOf(job), job: job.id, outcome: 'completed', summary });
  });
  worker.on('failed', (job, error) => {
    if (!job) return log.error({ reason: error.message }, 'job failed');
    const retries = !(error instanceof UnrecoverableError) && job.attemptsMade < (job.opts.attempts ?? 1);
    const code = errorCode(error);
    log.error(
      { ...fields(job), attempts: job.attemptsMade, retries, code, reason: error.message },
      'job failed',
    );
    outcomes.emit({
      shop: shopOf(job),
      job: job.id,
      outcome: retries ? 'retrying' : 'failed',
      code,
      reason: error.message,
    });
  });
  worker.on('stalled', (job) =>
    log.warn({ job }, 'job stalled: its worker stopped renewing its lock; it runs again'),
  );
  logErrors(worker, log, 'worker');
}
