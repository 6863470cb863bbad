import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, type ShopSyncError } from '../../errors.js';
import type { Logger } from '../../log.js';

/** How hard to try one logical request before giving up. Delays grow as `baseDelayMs * 2^(attempt-1)`,
 * capped at `maxDelayMs`, with full jitter; attempts go on until `budgetMs` is spent (or `maxAttempts`,
 * unlimited by default, are made). */
export interface RetryOptions {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly budgetMs: number;
}

export const DEFAULT_RETRY: RetryOptions = Object.freeze({
  maxAttempts: Number.POSITIVE_INFINITY,
  baseDelayMs: 250,
  maxDelayMs: 15_000,
  budgetMs: 120_000,
});

/** The shortest attempt worth starting: a retry that would leave less of the budget is not made. */
function minimumAttemptMs(options: RetryOptions): number {
  return Math.min(1_000, options.budgetMs / 10);
}

/**
 * The allowance of one logical request: its attempts and the token renewal it waits for share it, so
 * that nested retries never add up to more than one budget and the final message counts every attempt.
 */
export class RetryBudget {
  readonly startedAt = Date.now();
  /** Failed attempts so far under this budget, the login's included. */
  attempts = 0;

  constructor(readonly options: RetryOptions) {}

  /** Epoch milliseconds at which the budget is spent. */
  get deadline(): number {
    return this.startedAt + this.options.budgetMs;
  }

  remainingMs(): number {
    return this.deadline - Date.now();
  }

  /** How hard this request tried, e.g. `after 7 attempts in 118 s (budget 120 s)`. */
  spent(): string {
    const n = this.attempts;
    return `after ${n} attempt${n === 1 ? '' : 's'} in ${seconds(Date.now() - this.startedAt)} (budget ${seconds(this.options.budgetMs)})`;
  }
}

/** `2.9 s` below ten seconds, `118 s` above. */
export function seconds(ms: number): string {
  const s = ms / 1000;
  return `${s < 10 ? Number(s.toFixed(1)) : Math.round(s)} s`;
}

/**
 * One attempt failed in a way that another attempt may fix (429, 5xx, timeout, dropped connection,
 * truncated body). Keeps the parts of its message apart so the final error can say how hard we tried.
 */
export class TransientError extends ApiError {
  constructor(
    /** The request as shown to users, e.g. `GET /v1/sell/shop/items?page=3`, already sanitised. */
    readonly request: string,
    /** What went wrong, one clause, already sanitised. */
    readonly detail: string,
    status?: number,
    /** The wait the server asked for (Retry-After), in milliseconds. */
    readonly retryAfterMs?: number,
    options?: { cause?: unknown; shortWindow?: ShortWindow },
  ) {
    super(
      status === undefined
        ? `${request} failed: ${detail}`
        : `${request} failed with HTTP ${status}: ${detail}`,
      true,
      status,
      options,
    );
    this.shortWindow = options?.shortWindow;
  }

  /** Set when this failure is worth only a few seconds of the budget (see ShortWindow). */
  readonly shortWindow: ShortWindow | undefined;
}

/**
 * A failure that is more likely a wrong setting than an outage (a refused connection before the server
 * ever answered): retried for `ms` from the budget's start, to ride out a restart, then ended with the
 * error `giveUp` makes of how hard it was tried.
 */
export interface ShortWindow {
  readonly ms: number;
  readonly giveUp: (tried: string) => ShopSyncError;
}

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its month; this keeps Date.parse from reading "-3" as a year.
  if (!/[a-z]/i.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Full jitter: a uniform wait between 0 and the capped exponential step (AWS architecture blog). */
export function backoffDelay(
  attempt: number,
  options: RetryOptions,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

export interface RetryContext {
  readonly budget: RetryBudget;
  readonly logger: Logger;
  /** Aborts the sleeps between attempts. */
  readonly signal?: AbortSignal;
  /** A tighter cap on this loop's attempts than the options' (a refresh grant is worth two). */
  readonly maxAttempts?: number;
}

/**
 * Runs `attempt` until it succeeds, throws something other than a TransientError, or the budget (or the
 * attempts) run out. A `Retry-After` is honoured as asked; one that reaches past the budget ends the
 * retries at once, since waiting would only end in the same failure later.
 */
export async function withRetry<T>(context: RetryContext, attempt: (n: number) => Promise<T>): Promise<T> {
  const { budget, logger, signal } = context;
  const maxAttempts = Math.min(context.maxAttempts ?? Number.POSITIVE_INFINITY, budget.options.maxAttempts);
  for (let n = 1; ; n += 1) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
      budget.attempts += 1;
      const next = nextWait(error, n, budget);
      const window = error.shortWindow;
      if (window && (n >= maxAttempts || next.giveUp || elapsedAfter(budget, next.delayMs) >= window.ms))
        throw window.giveUp(budget.spent());
      if (n >= maxAttempts || next.giveUp) throw exhausted(error, budget, next.askedWaitMs);
      // One or two retries absorb routine hiccups (a 429, a restart); a third in a row is worth a warning.
      logger[n >= 3 ? 'warn' : 'debug'](
        { attempt: budget.attempts, delayMs: next.delayMs, status: error.status, request: error.request },
        `retrying after: ${error.detail}`,
      );
      await sleep(next.delayMs, undefined, { signal });
    }
  }
}

/** Milliseconds of the budget spent once a wait of `delayMs` is over. */
function elapsedAfter(budget: RetryBudget, delayMs: number): number {
  return Date.now() + delayMs - budget.startedAt;
}

interface Wait {
  readonly giveUp: boolean;
  readonly delayMs: number;
  readonly askedWaitMs?: number;
}

/** The wait before the next attempt, shortened so that attempt still fits in the budget. */
function nextWait(error: TransientError, n: number, budget: RetryBudget): Wait {
  const room = budget.remainingMs() - minimumAttemptMs(budget.options);
  if (error.retryAfterMs !== undefined) {
    return error.retryAfterMs > room
      ? { giveUp: true, delayMs: 0, askedWaitMs: error.retryAfterMs }
      : { giveUp: false, delayMs: error.retryAfterMs };
  }
  if (room < 0) return { giveUp: true, delayMs: 0 };
  return { giveUp: false, delayMs: Math.min(backoffDelay(n, budget.options), room) };
}

/** The final error; `askedWaitMs` is a Retry-After that reached past the budget, worth telling since
 * raising the budget is then the fix. */
function exhausted(last: TransientError, budget: RetryBudget, askedWaitMs: number | undefined): ApiError {
  const tried = budget.spent();
  const failed =
    last.status === undefined
      ? `${last.request} failed ${tried}: ${last.detail}`
      : `${last.request} failed with HTTP ${last.status} ${tried}: ${last.detail}`;
  const asked =
    askedWaitMs === undefined
      ? ''
      : `; the server asked to wait ${Math.ceil(askedWaitMs / 1000)} s, beyond the retry budget of ${budget.options.budgetMs / 1000} s`;
  return new ApiError(`${failed}${asked}`, true, last.status, { cause: last });
}
