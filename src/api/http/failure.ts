import { errors as undiciErrors } from 'undici';
import { ApiError, ProtocolError, ResponseTooLargeError } from '../../errors.js';
import type { HttpResponse } from './response.js';
import { parseRetryAfter, TransientError } from './retry.js';
import { serverMessage } from './server-message.js';
import {
  classifyTransportFailure,
  errorCode,
  FIRST_CONTACT_MS,
  hasAnswered,
  settingError,
  type TransportFailureKind,
} from './transport-failure.js';

/**
 * The client's one decision of retriable against fatal for an answer it did not want, in the spirit of
 * the Singer SDK's `validate_response`. The server pushing back or failing on its side (429, 408, 5xx)
 * is worth another attempt: a TransientError, which `withRetry` retries within the budget, honouring
 * Retry-After. Any other status is the server refusing this request: a fatal ApiError. Either way with
 * the server's own message, kept free of `secrets`. Callers may first turn a status they know better
 * (a 401 of the token endpoint) into an error of their own. `failedExchange` decides for an exchange
 * that brought no answer.
 */
export function failedResponse(response: HttpResponse, shown: string, secrets: readonly string[]): ApiError {
  const { status } = response;
  const detail = serverMessage(response.body, secrets);
  if (status === 429 || status === 408 || status >= 500) {
    return new TransientError(shown, detail, status, parseRetryAfter(response.headers['retry-after']));
  }
  return new ApiError(`${shown} failed with HTTP ${status}: ${detail}`, false, status);
}

/** Where the requests go and what bounds their answers: what tells a setting at fault from an outage. */
export interface Exchange {
  readonly baseUrl: URL;
  /** The setting that names `baseUrl`, as the user wrote it. */
  readonly baseUrlSetting: string;
  readonly maxResponseBytes: number;
}

/**
 * The same decision for an exchange that brought no answer: an abort stays one; an answer over the
 * cap, or a request that cannot be sent (a value that is not valid HTTP), is fatal; a TLS failure is
 * the setting's fault, fatal; any other network failure is worth another attempt (a TransientError),
 * with a short window on first contact, after which it is taken as the setting's fault too.
 */
export function failedExchange(error: unknown, shown: string, exchange: Exchange): unknown {
  if (error instanceof ApiError || isAbort(error)) return error;
  if (error instanceof undiciErrors.ResponseExceededMaxSizeError) {
    return new ResponseTooLargeError(
      `${shown} failed: the response exceeded ${exchange.maxResponseBytes} bytes`,
      exchange.maxResponseBytes,
      { cause: error },
    );
  }
  if (error instanceof undiciErrors.InvalidArgumentError) {
    // Nothing was sent: a value in the request (a header) is not valid HTTP, and never will be.
    return new ProtocolError(
      `${shown} could not be sent: the request holds a value that is not valid HTTP (${error.code})`,
      { cause: error },
    );
  }
  const kind = classifyTransportFailure(error);
  const code = errorCode(error) ?? 'no code';
  if (kind === 'tls') return settingError(kind, code, exchange.baseUrl, exchange.baseUrlSetting, '');
  const firstContact = kind !== 'other' && !hasAnswered(exchange.baseUrl.origin);
  const shortWindow = firstContact
    ? {
        ms: FIRST_CONTACT_MS,
        giveUp: (tried: string) => settingError(kind, code, exchange.baseUrl, exchange.baseUrlSetting, tried),
      }
    : undefined;
  return new TransientError(shown, networkProblem(error, kind, exchange.baseUrl), undefined, undefined, {
    cause: error,
    shortWindow,
  });
}

function isAbort(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === 'AbortError' || error instanceof undiciErrors.RequestAbortedError)
  );
}

/**
 * A network failure in words, with its code so that operators can search for it. One that never
 * reached the server says so: after the retries, that is the sentence of an outage.
 */
function networkProblem(error: unknown, kind: TransportFailureKind, baseUrl: URL): string {
  const code = errorCode(error);
  const what = failureInWords(error, kind);
  if (kind !== 'other' || error instanceof undiciErrors.ConnectTimeoutError) {
    const withCode = typeof code === 'string' ? `${what}, ${code}` : what;
    return `the marketplace at ${baseUrl.host} did not answer (${withCode})`;
  }
  return typeof code === 'string' ? `${what} (${code})` : what;
}

function failureInWords(error: unknown, kind: TransportFailureKind): string {
  if (error instanceof undiciErrors.ConnectTimeoutError) return 'timed out connecting';
  if (error instanceof undiciErrors.HeadersTimeoutError) return 'timed out waiting for the response';
  if (error instanceof undiciErrors.BodyTimeoutError) return 'timed out reading the response body';
  if (kind === 'refused') return 'the connection was refused';
  if (kind === 'dns') return 'the host name does not resolve';
  if (kind === 'unroutable') return 'the host cannot be reached from this machine';
  return 'the connection dropped before the response was complete';
}
