import { describe, expect, it } from 'vitest';
import { failedResponse } from '../../../src/api/http/failure.js';
import { ReceivedResponse } from '../../../src/api/http/response.js';
import { TransientError } from '../../../src/api/http/retry.js';
import { ApiError } from '../../../src/errors.js';

const answer = (status: number, headers: Record<string, string> = {}) =>
  new ReceivedResponse(
    status,
    headers,
    Buffer.from(JSON.stringify({ message: `the server says ${status} to token s3cret` })),
  );

describe('failedResponse', () => {
  it('retries rate limiting, a request timeout and server errors, honouring Retry-After', () => {
    for (const status of [429, 408, 500, 502, 503, 504]) {
      const failure = failedResponse(answer(status, { 'retry-after': '7' }), 'GET /v1/x', ['s3cret']);
      expect(failure).toBeInstanceOf(TransientError);
      expect(failure).toMatchObject({ retryable: true, status, retryAfterMs: 7000 });
      expect(failure.message).toBe(
        `GET /v1/x failed with HTTP ${status}: the server says ${status} to token [redacted]`,
      );
    }
  });

  it('fails for good on any other status, with the server message and without secrets', () => {
    for (const status of [400, 401, 403, 404, 409, 422]) {
      const failure = failedResponse(answer(status), 'GET /v1/x', ['s3cret']);
      expect(failure).toBeInstanceOf(ApiError);
      expect(failure).not.toBeInstanceOf(TransientError);
      expect(failure).toMatchObject({ retryable: false, status, code: 'MARKETPLACE_REFUSED' });
      expect(failure.message).toBe(
        `GET /v1/x failed with HTTP ${status}: the server says ${status} to token [redacted]`,
      );
    }
  });
});
