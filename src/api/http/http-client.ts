import { setMaxListeners } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { Pool } from 'undici';
import { validateBaseUrl } from '../../config/base-url.js';
import { ENV_SETTING_NAMES } from '../../config/settings.js';
import { ApiError, InterruptedError, ProtocolError } from '../../errors.js';
import { decodedBody } from './content-encoding.js';
import { type Exchange, failedExchange } from './failure.js';
import { linkedSignal } from './linked-signal.js';
import { type HttpResponse, ReceivedResponse } from './response.js';
import { seconds, TransientError } from './retry.js';
import { sanitizeUrl } from './sanitize.js';
import { isHeaderSafe } from './server-values.js';
import { openPool, type PoolSettings, type SharedPools } from './shared-pools.js';
import { mayBeTlsServer, speaksTls } from './tls-probe.js';
import { hasAnswered, markAnswered, settingError } from './transport-failure.js';

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
  /** The process's pools, shared with other clients: this client borrows one and leaves it open when it
   * is closed. Without them it opens a pool of its own and closes it with itself. */
  readonly pools?: SharedPools;
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

/**
 * Requests to the marketplace's origin over a keep-alive connection pool, its own or one borrowed from
 * the process's `SharedPools`. Answers every status as a response except redirects, which are errors:
 * following one would hand the Authorization header to another address.
 */
export class HttpClient {
  readonly baseUrl: URL;
  private readonly basePath: string;
  private readonly pool: Pool;
  /** Whether the pool is this client's, closed with it, rather than borrowed. */
  private readonly ownsPool: boolean;
  /** Aborted when the client is closed: none of its requests outlives it in a pool others go on using. */
  private readonly closed = new AbortController();
  private readonly maxResponseBytes: number;
  private readonly totalMs: number;
  private readonly events: HttpEvents;
  private readonly baseUrlSetting: string;
  /** What `failedExchange` needs to tell a setting from an outage. */
  private readonly exchange: Exchange;
  private closing: Promise<void> | undefined;
  private tlsProbe: Promise<boolean> | undefined;

  constructor(options: HttpOptions) {
    this.baseUrl = validateBaseUrl(options.baseUrl, options.allowInsecure);
    this.basePath = this.baseUrl.pathname.replace(/\/+$/, '');
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    this.totalMs = timeouts.totalMs;
    this.events = options.events ?? {};
    this.baseUrlSetting = options.baseUrlSetting ?? ENV_SETTING_NAMES.baseUrl;
    this.exchange = {
      baseUrl: this.baseUrl,
      baseUrlSetting: this.baseUrlSetting,
      maxResponseBytes: this.maxResponseBytes,
    };
    const settings: PoolSettings = {
      connectMs: timeouts.connectMs,
      headersMs: timeouts.headersMs,
      bodyMs: timeouts.bodyMs,
      maxResponseBytes: this.maxResponseBytes,
      connections: options.connections ?? 8,
    };
    // Each request in flight listens for the close until it ends: as many listeners as requests in
    // flight (read-ahead, item look-ups), none left behind.
    setMaxListeners(0, this.closed.signal);
    this.ownsPool = options.pools === undefined;
    this.pool =
      options.pools?.borrow(this.baseUrl.origin, settings) ?? openPool(this.baseUrl.origin, settings);
  }

  /**
   * `failedExchange`, unless a plain-HTTP base URL that never answered dropped the connection because a
   * TLS server is there: a setting, said at once. The handshake that tells is made once per client.
   */
  private async failed(error: unknown, shown: string): Promise<unknown> {
    if (!hasAnswered(this.baseUrl.origin) && mayBeTlsServer(this.baseUrl, error)) {
      this.tlsProbe ??= speaksTls(this.baseUrl);
      if (await this.tlsProbe) return settingError('speaks-tls', '', this.baseUrl, this.baseUrlSetting, '');
    }
    return failedExchange(error, shown, this.exchange);
  }

  /** Failing to reach the base URL's origin is from now on an outage (see `transport-failure.ts`). */
  knownToAnswer(): void {
    markAnswered(this.baseUrl.origin);
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
    if (this.closed.signal.aborted) throw closedClient(shown, 'was not sent');
    const limitMs = Math.max(
      1,
      Math.min(this.totalMs, (request.deadline ?? Number.POSITIVE_INFINITY) - Date.now()),
    );
    const overdue = linkedSignal([request.signal, this.closed.signal]);
    const timer = setTimeout(() => overdue.abort(new Error('deadline')), limitMs);
    let status: number | undefined;
    let received: { status: number; headers: IncomingHttpHeaders; bytes: Uint8Array };
    try {
      const response = await this.pool.request({
        method: request.method,
        path: `${this.basePath}${request.path}`,
        headers: request.headers,
        body: request.body,
        signal: overdue.signal,
      });
      status = response.statusCode;
      markAnswered(this.baseUrl.origin);
      this.events.response?.(status);
      const bytes = await response.body.bytes();
      if (status >= 300 && status < 400) throw this.redirected(request, shown, status, response.headers);
      received = { status, headers: response.headers, bytes };
    } catch (error) {
      const stopped = request.signal?.aborted === true;
      if (this.closed.signal.aborted && !stopped) throw closedClient(shown, 'was stopped', error);
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
      throw await this.failed(error, shown);
    } finally {
      clearTimeout(timer);
      overdue.unlink();
    }
    const { headers, bytes } = received;
    const body = decodedBody(bytes, headers, shown, this.maxResponseBytes);
    return new ReceivedResponse(received.status, headers, body);
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

  /**
   * Aborts the requests still in flight (a token renewal that no request waits for any more), then closes
   * the pool if it is the client's own; a borrowed one stays open for the other clients. Once; later
   * calls wait for the same close.
   */
  close(): Promise<void> {
    this.closed.abort();
    this.closing ??= this.ownsPool ? this.pool.close() : Promise.resolve();
    return this.closing;
  }
}

/** A request of a client that was closed: nothing waits for its answer any more. */
function closedClient(shown: string, what: string, cause?: unknown): InterruptedError {
  return new InterruptedError(`${shown} ${what}: its marketplace client was closed.`, { cause });
}
