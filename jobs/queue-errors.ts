import { ShopSyncError } from '../src/errors.js';

/** Redis (BullMQ's store) cannot be reached: nothing can be queued or processed. */
export class QueueUnavailableError extends ShopSyncError {
  readonly code = 'QUEUE_UNAVAILABLE';
  readonly retryable = true;
  readonly exitCode = 1;
}

/** A queued sync finished as failed; the message carries the job's failure reason. */
export class SyncJobFailedError extends ShopSyncError {
  readonly code = 'JOB_FAILED';
  readonly retryable = false;
  readonly exitCode = 1;
}

/** No worker serves a shop's queue: a queued sync would wait for ever. */
export class NoWorkerError extends ShopSyncError {
  readonly code = 'NO_WORKER';
  readonly retryable = true;
  readonly exitCode = 1;
}

/** `trigger --wait --timeout` gave up waiting; the sync goes on in the worker. */
export class WaitTimeoutError extends ShopSyncError {
  readonly code = 'WAIT_TIMEOUT';
  readonly retryable = true;
  readonly exitCode = 1;
}
