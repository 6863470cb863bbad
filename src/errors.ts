/**
 * The few error classes shop-sync throws. Each carries what a caller needs to decide what to do
 * (retry or not, which setting or file is at fault); the CLI and the worker translate them once, at
 * the edge, into an exit code or a job outcome.
 */

export abstract class ShopSyncError extends Error {
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
  readonly retryable = false;
  readonly exitCode = 2;
}

/** The marketplace refused the application's or the shop owner's credentials. Never retried. */
export class CredentialsError extends ShopSyncError {
  readonly retryable = false;
  readonly exitCode = 1;
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** An HTTP exchange with the marketplace failed. `status` is absent for network failures. */
export class ApiError extends ShopSyncError {
  readonly exitCode = 1;
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The marketplace answered, but not in a way that can be read safely (loops, malformed pages). */
export class ProtocolError extends ShopSyncError {
  readonly retryable = false;
  readonly exitCode = 1;
}

/** The SQLite store or a feed file could not be read or written. `path` names the file. */
export class StoreError extends ShopSyncError {
  readonly exitCode = 1;
  constructor(
    message: string,
    readonly path: string,
    readonly retryable = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Another sync of the same shop holds the shop's lease. Retryable: it will finish. */
export class SyncBusyError extends ShopSyncError {
  readonly retryable = true;
  readonly exitCode = 1;
}

/** The work was stopped on request (SIGINT/SIGTERM) at a safe point; running it again resumes it. */
export class InterruptedError extends ShopSyncError {
  readonly retryable = true;
  readonly exitCode = 1;
}
