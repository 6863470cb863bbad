import { ApiError } from '../../errors.js';
import type { HttpResponse } from './http-client.js';
import { parseRetryAfter, TransientError } from './retry.js';
import { serverMessage } from './server-message.js';

/**
 * The client's one decision of retriable against fatal for an answer it did not want, in the spirit of
 * the Singer SDK's `validate_response`. The server pushing back or failing on its side (429, 408, 5xx)
 * is worth another attempt: a TransientError, which `withRetry` retries within the budget, honouring
 * Retry-After. Any other status is the server refusing this request: a fatal ApiError. Either way with
 * the server's own message, kept free of `secrets`. Callers may first turn a status they know better
 * (a 401 of the token endpoint) into an error of their own; failures without an answer are decided
 * where they arise (http.ts, transport-failure.ts).
 */
export function failedResponse(response: HttpResponse, shown: string, secrets: readonly string[]): ApiError {
  const { status } = response;
  const detail = serverMessage(response.body, secrets);
  if (status === 429 || status === 408 || status >= 500) {
    return new TransientError(shown, detail, status, parseRetryAfter(response.headers['retry-after']));
  }
  return new ApiError(`${shown} failed with HTTP ${status}: ${detail}`, false, status);
}
