import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  parseRetryAfter,
  RetryBudget,
  type RetryOptions,
  TransientError,
  withRetry,
} from '../../../src/api/http/retry.js';
import { ApiError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log.js';

const fast: RetryOptions = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 4, budgetMs: 5_000 };
const context = () => ({ budget: new RetryBudget(fast), logger: silentLogger() });

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter('7')).toBe(7_000);
  });

  it('reads an HTTP date relative to now', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:03 GMT', now)).toBe(3_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('-3')).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('stays within the capped exponential step', () => {
    const options: RetryOptions = { maxAttempts: 8, baseDelayMs: 250, maxDelayMs: 15_000, budgetMs: 120_000 };
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.double({ min: 0, max: 0.999_999, noNaN: true }),
        (n, r) => {
          const delay = backoffDelay(n, options, () => r);
          return delay >= 0 && delay <= Math.min(15_000, 250 * 2 ** (n - 1));
        },
      ),
    );
  });
});

describe('withRetry', () => {
  it('returns the first success', async () => {
    const seen: number[] = [];
    const value = await withRetry(context(), async (n) => {
      seen.push(n);
      if (n < 3) throw new TransientError('GET /x', 'upstream hiccup', 503);
      return 'ok';
    });
    expect(value).toBe('ok');
    expect(seen).toEqual([1, 2, 3]);
  });

  it('gives up after maxAttempts with the status, the attempts and the budget in one sentence', async () => {
    let attempts = 0;
    const failure = withRetry(context(), async () => {
      attempts += 1;
      throw new TransientError('GET /v1/sell/shop/items?page=3', 'Service Unavailable', 503);
    });
    await expect(failure).rejects.toThrow(
      /^GET \/v1\/sell\/shop\/items\?page=3 failed with HTTP 503 after 4 attempts in 0(\.\d)? s \(budget 5 s\): Service Unavailable$/,
    );
    await failure.catch((error: ApiError) => {
      expect(error).toBeInstanceOf(ApiError);
      expect(error.retryable).toBe(true);
      expect(error.status).toBe(503);
    });
    expect(attempts).toBe(4);
  });

  it('stops at once when Retry-After reaches past the budget', async () => {
    let attempts = 0;
    const failure = withRetry(context(), async () => {
      attempts += 1;
      throw new TransientError('GET /x', 'Too Many Requests', 429, 60_000);
    });
    await expect(failure).rejects.toThrow(
      /^GET \/x failed with HTTP 429 after 1 attempt in [\d.]+ s \(budget 5 s\): Too Many Requests; the server asked to wait 60 s, beyond the retry budget of 5 s$/,
    );
    expect(attempts).toBe(1);
  });

  it('does not retry other errors', async () => {
    let attempts = 0;
    const failure = withRetry(context(), async () => {
      attempts += 1;
      throw new ApiError('GET /x failed with HTTP 404: gone', false, 404);
    });
    await expect(failure).rejects.toThrow('GET /x failed with HTTP 404: gone');
    expect(attempts).toBe(1);
  });

  it('names network failures without a status', async () => {
    const failure = withRetry(context(), async () => {
      throw new TransientError(
        'GET /x',
        'the connection dropped before the response was complete (UND_ERR_SOCKET)',
      );
    });
    await expect(failure).rejects.toThrow(
      /^GET \/x failed after 4 attempts in 0(\.\d)? s \(budget 5 s\): the connection dropped before the response was complete \(UND_ERR_SOCKET\)$/,
    );
  });
});
