/**
 * The few error classes shop-sync throws. Each carries what a caller needs to decide what to do
 * (retry or not, which setting or file is at fault); the CLI and the worker translate them once, at
 * the edge, into an exit code or a job outcome.
 */

/**
 * Stable machine codes, one per kind of failure: logs (field `code`), job failures and metrics group by
 * them without parsing messages. Written once here; add a code rather than reuse one that means something else.
 */
export const ERROR_CODES = [
  'CONFIG_INVALID',
  'USAGE_INVALID',
  'CREDENTIALS_REJECTED',
  'MARKETPLACE_UNREACHABLE',
  'MARKETPLACE_REFUSED',
  'MARKETPLACE_PROTOCOL',
  'LISTING_MOVED',
  'STORE_FAILED',
  'STORE_LOCKED',
  'STORE_CORRUPT',
  'SYNC_BUSY',
  'INTERRUPTED',
  'QUEUE_UNAVAILABLE',
  'JOB_FAILED',
  'NO_WORKER',
  'WAIT_TIMEOUT',
  'SHOPS_FAILED',
  'NOTIFY_FAILED',
  'REMOVALS_HELD',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export abstract class ShopSyncError extends Error {
  /** What kind of failure this is, for machines; the message is for people. */
  abstract readonly code: ErrorCode;
  /** Whether trying the same work again later may succeed. */
  abstract readonly retryable: boolean;
  /** 1: the work failed; 2: the user asked for something that cannot be done as asked. */
  abstract readonly exitCode: 1 | 2;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A setting is missing or invalid. `setting` names it as the user wrote it (env var or file key). */
export class ConfigError extends ShopSyncError {
  readonly code = 'CONFIG_INVALID';
  readonly retryable = false;
  readonly exitCode = 2;
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
  }
}

/** A command line that cannot be run as written (unknown run, bad flag value). */
export class UsageError extends ShopSyncError {
  readonly code = 'USAGE_INVALID';
  readonly retryable = false;
  readonly exitCode = 2;
}

/** The marketplace refused the application's or the shop owner's credentials. Never retried. */
export class CredentialsError extends ShopSyncError {
  readonly code = 'CREDENTIALS_REJECTED';
  readonly retryable = false;
  readonly exitCode = 1;
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * An HTTP exchange with the marketplace failed. `status` is absent for network failures. Retryable
 * failures (network, 429, 5xx) mean the marketplace could not be reached; the others that it refused.
 */
export class ApiError extends ShopSyncError {
  readonly exitCode = 1;
  readonly code: ErrorCode;
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.code = retryable ? 'MARKETPLACE_UNREACHABLE' : 'MARKETPLACE_REFUSED';
  }
}

/**
 * An answer larger than the response cap: refused unread, so that one answer cannot exhaust memory.
 * A listing reader asks for fewer items at a time instead.
 */
export class ResponseTooLargeError extends ApiError {
  constructor(
    message: string,
    readonly capBytes: number,
    options?: { cause?: unknown },
  ) {
    super(message, false, undefined, options);
  }
}

/** The marketplace answered, but not in a way that can be read safely (loops, malformed pages). */
export class ProtocolError extends ShopSyncError {
  readonly code = 'MARKETPLACE_PROTOCOL';
  readonly retryable = false;
  readonly exitCode = 1;
}

/**
 * The listing moved so fast while it was read that no answer could be tied to what was already read:
 * the run cannot promise to hold every item. Retryable: a calmer moment reads it whole.
 */
export class ListingMovedError extends ShopSyncError {
  readonly code = 'LISTING_MOVED';
  readonly retryable = true;
  readonly exitCode = 1;
}

/**
 * An item's own URL answered an item that cannot be read (a value outside the limits): the item is
 * there, so it is not removed, but it is invalid. `reason` is the item's, without the request.
 */
export class InvalidItemError extends ProtocolError {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

/**
 * The SQLite store or a feed file could not be read or written. `path` names the file. A retryable
 * store error is one another process holds locked (STORE_LOCKED): it goes away when that process is done.
 */
export class StoreError extends ShopSyncError {
  readonly exitCode = 1;
  readonly code: ErrorCode;
  constructor(
    message: string,
    readonly path: string,
    readonly retryable = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.code = retryable ? 'STORE_LOCKED' : 'STORE_FAILED';
  }
}

/**
 * SQLite found the store damaged (SQLITE_CORRUPT, SQLITE_NOTADB, or `PRAGMA quick_check` said so). Never
 * retried: only moving the file aside helps, and the message says so.
 */
export class StoreCorruptError extends StoreError {
  override readonly code: ErrorCode = 'STORE_CORRUPT';
}

/** Another sync of the same shop holds the shop's lease. Retryable: it will finish. */
export class SyncBusyError extends ShopSyncError {
  readonly code = 'SYNC_BUSY';
  readonly retryable = true;
  readonly exitCode = 1;
}

/** The work was stopped on request (SIGINT/SIGTERM) at a safe point; running it again resumes it. */
export class InterruptedError extends ShopSyncError {
  readonly code = 'INTERRUPTED';
  readonly retryable = true;
  readonly exitCode = 1;
}

/** A command over several shops (`sync --all`, `check --all`) failed for some; each was reported already. */
export class ShopsFailedError extends ShopSyncError {
  readonly code = 'SHOPS_FAILED';
  readonly retryable = true;
  readonly exitCode = 1;
}

/**
 * A notification (NOTIFY_URL) was not taken: no 2xx answer in time. Retryable: the receiver may come
 * back. It never fails a sync; the CLI warns with it, the worker's delivery queue retries it.
 */
export class DeliveryError extends ShopSyncError {
  readonly code = 'NOTIFY_FAILED';
  readonly retryable = true;
  readonly exitCode = 1;
}

/**
 * A run would have removed more items than SYNC_MAX_REMOVED allows: it is held, its feeds not replaced.
 * Not retried: the next sync reads the listing again, and only the listing coming back or a person
 * accepting the removals (`--accept-removals`) settles it.
 */
export class RemovalsHeldError extends ShopSyncError {
  readonly code = 'REMOVALS_HELD';
  readonly retryable = false;
  readonly exitCode = 1;
}
