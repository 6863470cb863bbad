import type { IncomingHttpHeaders } from 'node:http';
import { Pool, errors as undiciErrors } from 'undici';
import { validateBaseUrl } from '../../config/base-url.js';
import { ENV_SETTING_NAMES } from '../../config/settings.js';
import { ApiError, ProtocolError, ResponseTooLargeError } from '../../errors.js';
import { seconds, TransientError } from './retry.js';
import { sanitizeUrl } from './sanitize.js';
import { isHeaderSafe } from './server-values.js';
import {
  classifyTransportFailure,
  errorCode,
  FIRST_CONTACT_MS,
  hasAnswered,
  markAnswered,
  settingError,
} from './transport-failure.js';

export interface HttpTimeouts {
  readonly connectMs: number;
  readonly headersMs: number;
  /** Between two chunks of the body (undici's bodyTimeout). */
  readonly bodyMs: number;
  /** The whole of one attempt, connecting to the last byte of the body: a server that drips its
   * body one byte at a time never trips `bodyMs`. */
  readonly totalMs: number;
}

export const DEFAULT_TIMEOUTS: HttpTimeouts = Object.freeze({
  connectMs: 10_000,
  headersMs: 30_000,
  bodyMs: 30_000,
  totalMs: 60_000,
});
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export interface HttpOptions {
  readonly baseUrl: string;
  /** Allow plain `http:` to a host that is not loopback (MARKETPLACE_ALLOW_INSECURE=1). */
  readonly allowInsecure?: boolean;
  readonly timeouts?: Partial<HttpTimeouts>;
  readonly maxResponseBytes?: number;
  /** Sockets kept open to the marketplace; read-ahead uses one per page in flight. */
  readonly connections?: number;
  readonly events?: HttpEvents;
  /** The base URL's setting as the user wrote it, for messages. */
  readonly baseUrlSetting?: string;
}

/** What the marketplace answered, for metrics: each status as it arrives, or 'network' for a failure without one. */
export interface HttpEvents {
  response?(status: number | 'network'): void;
}

export interface HttpRequest {
  readonly method: 'GET' | 'POST';
  /** Path and query below the base URL, starting with `/`. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal?: AbortSignal;
  /** Epoch milliseconds the attempt must end by (the retry budget's end); the total timeout applies too. */
  readonly deadline?: number;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * One keep-alive connection pool to the marketplace's origin. Answers every status as a response except
 * redirects, which are errors: following one would hand the Authorization header to another address.
 */
export class HttpClient {
  readonly baseUrl: URL;
  private readonly basePath: string;
  private readonly pool: Pool;
  private readonly maxResponseBytes: number;
  private readonly totalMs: number;
  private readonly events: HttpEvents;
  private readonly baseUrlSetting: string;
  private closing: Promise<void> | undefined;

  constructor(options: HttpOptions) {
    this.baseUrl = validateBaseUrl(options.baseUrl, options.allowInsecure);
    this.basePath = this.baseUrl.pathname.replace(/\/+$/, '');
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    this.totalMs = timeouts.totalMs;
    this.events = options.events ?? {};
    this.baseUrlSetting = options.baseUrlSetting ?? ENV_SETTING_NAMES.baseUrl;
    this.pool = new Pool(this.baseUrl.origin, {
      connections: options.connections ?? 8,
      connectTimeout: timeouts.connectMs,
      headersTimeout: timeouts.headersMs,
      bodyTimeout: timeouts.bodyMs,
      maxResponseSize: this.maxResponseBytes,
      keepAliveTimeout: 30_000,
    });
  }

  /**
   * `url` made absolute against the base URL as a browser would (RFC 3986), so `/v1/items/7` from a
   * server at the origin's root is that server's item. Undefined when it cannot be a URL.
   */
  resolve(url: string): URL | undefined {
    try {
      return new URL(url, `${this.baseUrl.origin}${this.basePath}/`);
    } catch {
      return undefined;
    }
  }

  /** The path of `url` (see `resolve`) below the base URL when it is on the same origin and under the base path. */
  pathWithin(url: string): string | undefined {
    const target = this.resolve(url);
    if (target === undefined) return undefined;
    if (target.origin !== this.baseUrl.origin || target.username || target.password) return undefined;
    if (!target.pathname.startsWith(`${this.basePath}/`)) return undefined;
    return `${target.pathname.slice(this.basePath.length)}${target.search}`;
  }

  /**
   * One attempt, ended with a TransientError when it outlasts `timeouts.totalMs` or `request.deadline`,
   * whichever comes first.
   */
  async request(request: HttpRequest): Promise<HttpResponse> {
    const shown = `${request.method} ${sanitizeUrl(request.path)}`;
    // undici refuses such a header with InvalidArgumentError and, after a few, leaves later requests of
    // the pool pending for ever (undici 7): none is ever handed to it.
    const unsendable = Object.entries(request.headers ?? {}).find(([, value]) => !isHeaderSafe(value));
    if (unsendable) {
      throw new ProtocolError(
        `${shown} was not sent: its ${unsendable[0]} header would hold characters that cannot be sent in an HTTP header`,
      );
    }
    const limitMs = Math.max(
      1,
      Math.min(this.totalMs, (request.deadline ?? Number.POSITIVE_INFINITY) - Date.now()),
    );
    const overdue = new AbortController();
    const timer = setTimeout(() => overdue.abort(new Error('deadline')), limitMs);
    const signal = request.signal ? AbortSignal.any([request.signal, overdue.signal]) : overdue.signal;
    let status: number | undefined;
    try {
      const response = await this.pool.request({
        method: request.method,
        path: `${this.basePath}${request.path}`,
        headers: request.headers,
        body: request.body,
        signal,
      });
      status = response.statusCode;
      markAnswered(this.baseUrl.origin);
      this.events.response?.(status);
      const body = await response.body.text();
      if (status >= 300 && status < 400) throw this.redirected(request, shown, status, response.headers);
      return { status, headers: response.headers, body };
    } catch (error) {
      const stopped = request.signal?.aborted === true;
      if (status === undefined && !stopped) this.events.response?.('network');
      if (overdue.signal.aborted && !stopped) {
        throw new TransientError(
          shown,
          `the response was not complete within the ${seconds(limitMs)} deadline of one attempt`,
          undefined,
          undefined,
          { cause: error },
        );
      }
      throw this.translate(error, shown);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Where a redirect pointed, resolved against the request's URL as a browser would, and sanitised. */
  private redirected(
    request: HttpRequest,
    shown: string,
    status: number,
    headers: IncomingHttpHeaders,
  ): ApiError {
    const location = headers.location;
    const requested = new URL(`${this.basePath}${request.path}`, this.baseUrl.origin);
    const target = typeof location === 'string' ? URL.parse(location, requested.href) : null;
    const where = target ? ` to ${sanitizeUrl(target, { pathOnly: false })}` : '';
    return new ApiError(
      `${shown} was redirected (HTTP ${status})${where}; redirects are not followed so that credentials stay with ${this.baseUrlSetting}`,
      false,
      status,
    );
  }

  /** Closes the pool once; later calls wait for the same close. */
  close(): Promise<void> {
    this.closing ??= this.pool.close();
    return this.closing;
  }

  private translate(error: unknown, shown: string): unknown {
    if (error instanceof ApiError || isAbort(error)) return error;
    if (error instanceof undiciErrors.ResponseExceededMaxSizeError) {
      return new ResponseTooLargeError(
        `${shown} failed: the response exceeded ${this.maxResponseBytes} bytes`,
        this.maxResponseBytes,
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
    if (kind === 'tls') return settingError(kind, code, this.baseUrl, this.baseUrlSetting, '');
    const firstContact = kind !== 'other' && !hasAnswered(this.baseUrl.origin);
    const shortWindow = firstContact
      ? {
          ms: FIRST_CONTACT_MS,
          giveUp: (tried: string) => settingError(kind, code, this.baseUrl, this.baseUrlSetting, tried),
        }
      : undefined;
    return new TransientError(shown, networkProblem(error), undefined, undefined, {
      cause: error,
      shortWindow,
    });
  }
}

function isAbort(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === 'AbortError' || error instanceof undiciErrors.RequestAbortedError)
  );
}

/** A network failure in words, with its code so that operators can search for it. */
function networkProblem(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const suffix = typeof code === 'string' ? ` (${code})` : '';
  if (error instanceof undiciErrors.ConnectTimeoutError) return `timed out connecting${suffix}`;
  if (error instanceof undiciErrors.HeadersTimeoutError) return `timed out waiting for the response${suffix}`;
  if (error instanceof undiciErrors.BodyTimeoutError) return `timed out reading the response body${suffix}`;
  if (code === 'ECONNREFUSED') return `the connection was refused${suffix}`;
  return `the connection dropped before the response was complete${suffix}`;
}
