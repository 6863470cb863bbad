import { z } from 'zod';
import { ENV_SETTING_NAMES, type SettingNames } from '../../config/settings.js';
import {
  ApiError,
  ConfigError,
  CredentialsError,
  ProtocolError,
  ResponseTooLargeError,
} from '../../errors.js';
import type { Logger } from '../../log.js';
import { failedResponse } from '../http/failure.js';
import type { HttpClient } from '../http/http-client.js';
import type { HttpResponse } from '../http/response.js';
import { type RetryBudget, withRetry } from '../http/retry.js';
import { sanitizeUrl } from '../http/sanitize.js';
import { serverMessage } from '../http/server-message.js';
import { headerValueFrom, requestValueFrom } from '../http/server-values.js';
import { MemoryTokenStore, type StoredToken, type TokenStore } from './token-store.js';

export interface Credentials {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly username: string;
  readonly password: string;
}

/** Each token obtained, by grant, for metrics. */
export interface TokenEvents {
  token?(grant: StoredToken['grant']): void;
}

export interface TokenManagerOptions {
  readonly http: HttpClient;
  readonly credentials: Credentials;
  readonly logger: Logger;
  readonly store?: TokenStore;
  /** The client-wide stop: aborts token requests, their retry sleeps and the wait for the renewal lock. */
  readonly signal?: AbortSignal;
  readonly events?: TokenEvents;
  readonly settingNames?: SettingNames;
}

const TOKEN_PATH = '/v1/oauth/token';
/** Renew when this share of a token's lifetime has passed, leaving room for slow requests and clock skew. */
const RENEW_AT_SHARE = 0.9;
/** Tries of a refresh grant before logging in again: a refresh failing twice is not worth the whole budget. */
const REFRESH_ATTEMPTS = 2;

/** Seconds of validity; null, zero, negative or unreadable lifetimes say nothing, like an absent one. */
const lifetime = z.unknown().transform((value) => {
  const seconds = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
});

const TokenResponse = z.object({
  access_token: z.string().min(1),
  expires_in: lifetime.optional(),
  refresh_token: z.string().min(1).nullish(),
});

const OAuthError = z.object({ error: z.string() });

/** A token request the server turned down (4xx other than rate limiting), with its OAuth error code. */
class GrantRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly detail: string,
  ) {
    super(`the token endpoint refused the grant with HTTP ${status}${code ? ` (${code})` : ''}`);
  }
}

/**
 * Keeps a bearer token for the shop owner: password grant first, refresh before expiry and on a 401,
 * and the password grant again when refreshing fails or its token is refused. Renewals are
 * single-flight: concurrent requests that need a new token wait for the one renewal in progress.
 */
export class TokenManager {
  private readonly http: HttpClient;
  private readonly credentials: Credentials;
  private readonly logger: Logger;
  private readonly store: TokenStore;
  private readonly stop: AbortSignal | undefined;
  private readonly events: TokenEvents;
  private readonly names: SettingNames;
  /** Renewals that failed so far, and the last failure: callers that waited for it share it. */
  private failures = 0;
  private lastFailure: unknown;
  /** Set once a refreshed token was refused: from then on renewals use the password grant directly. */
  private refreshLeadsNowhere = false;
  private readonly seenTokens = new Set<string>();
  /**
   * The token this manager last read from the store or put there: sent without asking the store again
   * until it falls due. A shared store's round trip before every request was most of a small sync's
   * token cost; a token another process has since replaced is still found, on the 401 it may earn
   * (renewals read the store under its lock first).
   */
  private held: StoredToken | undefined;
  /** The store's token being read for the callers that hold none now: a sync's first windows all do. */
  private reading: Promise<StoredToken | undefined> | undefined;
  /**
   * The renewal this process runs, and whom it serves (its reason and the stale token): callers that
   * would renew the same token for the same reason await it rather than queue on the store's lock after
   * it, each re-reading the store and polling a shared lock (a first sync's two windows took the Redis
   * lock six times and read the token four times).
   */
  private renewing: { readonly key: string; readonly token: Promise<string> } | undefined;
  /** Once the password grant is refused, every caller gets that answer instead of asking again. */
  private refusal: CredentialsError | undefined;

  constructor(options: TokenManagerOptions) {
    this.http = options.http;
    this.credentials = options.credentials;
    this.logger = options.logger;
    this.store = options.store ?? new MemoryTokenStore();
    this.stop = options.signal;
    this.events = options.events ?? {};
    this.names = options.settingNames ?? ENV_SETTING_NAMES;
  }

  /** A token to send now: the stored one (another client's too, when the store is shared) unless it is due for renewal. */
  async accessToken(budget: RetryBudget): Promise<string> {
    if (this.held && Date.now() < this.held.renewAt) return this.held.accessToken;
    this.reading ??= this.store.get().finally(() => {
      this.reading = undefined;
    });
    const current = await this.reading;
    if (current) this.remember(current);
    if (current && Date.now() < current.renewAt) return current.accessToken;
    return this.renew('due', current?.accessToken, budget);
  }

  /** The API answered 401 to `refused`: refresh it (or log in again if refreshing fails). */
  afterRefusal(refused: string, budget: RetryBudget): Promise<string> {
    return this.renew('refused', refused, budget);
  }

  /** The API answered 401 to a freshly renewed token too: log in again with the password grant. */
  afterSecondRefusal(refused: string, budget: RetryBudget): Promise<string> {
    return this.renew('refused-again', refused, budget);
  }

  /** Every secret this manager has held, so that messages and logs can be scrubbed of them. */
  secrets(): string[] {
    return [this.credentials.clientSecret, this.credentials.password, ...this.seenTokens];
  }

  /**
   * Renewals queue on the store's lock and re-read the store first, so that of many callers holding the
   * same stale token only the first renews and the rest pick up its result (single flight): in this
   * process, by awaiting the renewal under way (`renewing`); in others, through the store.
   */
  private renew(reason: RenewReason, stale: string | undefined, budget: RetryBudget): Promise<string> {
    const key = `${reason} ${stale ?? ''}`;
    const shared = this.renewing;
    if (shared?.key === key) return this.within(budget, (signal) => raced(shared.token, signal));
    const entry = { key, token: this.renewOnce(reason, stale, budget) };
    this.renewing = entry;
    const forget = () => {
      if (this.renewing === entry) this.renewing = undefined;
    };
    entry.token.then(forget, forget);
    return entry.token;
  }

  private renewOnce(reason: RenewReason, stale: string | undefined, budget: RetryBudget): Promise<string> {
    const failuresBefore = this.failures;
    const renewal = async () => {
      // A renewal that failed while this caller waited is its answer too: trying again would spend a second budget.
      if (this.failures > failuresBefore) throw this.lastFailure;
      try {
        return await this.renewLocked(reason, stale, budget);
      } catch (error) {
        this.failures += 1;
        this.lastFailure = error;
        throw error;
      }
    };
    return this.within(budget, async (signal) => (await this.store.withLock(renewal, signal)).accessToken);
  }

  /** Waiting for a renewal, bounded by this caller's budget as well as by the stop. */
  private async within<T>(budget: RetryBudget, wait: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const outOfTime = AbortSignal.timeout(Math.max(0, budget.remainingMs()));
    const signal = this.stop ? AbortSignal.any([this.stop, outOfTime]) : outOfTime;
    try {
      return await wait(signal);
    } catch (error) {
      if (error !== outOfTime.reason) throw error;
      throw new ApiError(
        `Waiting for the marketplace token to be renewed used up the retry budget ${budget.spent()}.`,
        true,
      );
    }
  }

  private async renewLocked(
    reason: RenewReason,
    stale: string | undefined,
    budget: RetryBudget,
  ): Promise<StoredToken> {
    if (this.refusal) throw this.refusal;
    const current = await this.store.get();
    if (current) this.remember(current);
    if (current && current.accessToken !== stale && Date.now() < current.renewAt) {
      // After a refused refreshed token only a password-grant token is worth trying.
      if (reason !== 'refused-again' || current.grant === 'password') return current;
    }
    if (reason === 'refused-again' && current?.grant === 'refresh_token') {
      this.refreshLeadsNowhere = true;
      this.logger.warn('a refreshed token was refused; renewing with the password grant from now on');
    }
    const refreshToken = current?.refreshToken;
    const token =
      refreshToken && reason !== 'refused-again' && !this.refreshLeadsNowhere
        ? await this.refreshOrLogIn(refreshToken, budget)
        : await this.logIn(budget);
    await this.store.set(token);
    this.remember(token);
    return token;
  }

  /** Whatever goes wrong with a refresh, the password grant may still work: only its refusal is final. */
  private async refreshOrLogIn(refreshToken: string, budget: RetryBudget): Promise<StoredToken> {
    try {
      return await this.grant(
        'refresh_token',
        { grant_type: 'refresh_token', refresh_token: refreshToken },
        budget,
        REFRESH_ATTEMPTS,
      );
    } catch (error) {
      if (!(error instanceof GrantRefused || error instanceof ApiError || error instanceof ProtocolError))
        throw error;
      const status = error instanceof ProtocolError ? undefined : error.status;
      this.logger.info({ status, reason: error.message }, 'refreshing the token failed; logging in again');
      return this.logIn(budget);
    }
  }

  private async logIn(budget: RetryBudget): Promise<StoredToken> {
    const { username, password } = this.credentials;
    try {
      return await this.grant('password', { grant_type: 'password', username, password }, budget);
    } catch (error) {
      if (!(error instanceof GrantRefused)) throw error;
      this.refusal = credentialsRefused(error, this.names);
      throw this.refusal;
    }
  }

  private async grant(
    kind: StoredToken['grant'],
    fields: Record<string, string>,
    budget: RetryBudget,
    maxAttempts?: number,
  ): Promise<StoredToken> {
    const body = new URLSearchParams({
      ...fields,
      client_id: this.credentials.clientId,
      client_secret: this.credentials.clientSecret,
    }).toString();
    const shown = `POST ${TOKEN_PATH} (grant ${kind})`;
    const context = { budget, logger: this.logger, signal: this.stop, maxAttempts };
    const response = await withRetry(context, () =>
      this.http
        .request({
          method: 'POST',
          path: TOKEN_PATH,
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body,
          signal: this.stop,
          deadline: budget.deadline,
        })
        .then((r) => this.checkTokenResponse(r, shown, kind), tokenTooLarge),
    );
    const token = this.readToken(response, shown, kind);
    this.logger.debug({ grant: kind }, 'obtained a marketplace token');
    this.events.token?.(kind);
    return token;
  }

  /** A token from the store is the one to send, and a secret of this manager's too, wherever it came from. */
  private remember(token: StoredToken): void {
    this.held = token;
    this.seenTokens.add(token.accessToken);
    if (token.refreshToken) this.seenTokens.add(token.refreshToken);
  }

  private checkTokenResponse(
    response: HttpResponse,
    shown: string,
    kind: StoredToken['grant'],
  ): HttpResponse {
    if (response.status === 200) return response;
    const detail = serverMessage(response.body, this.secrets());
    if (response.status === 400 || response.status === 401) {
      throw new GrantRefused(response.status, oauthErrorCode(response.body), detail);
    }
    // A refresh grant's 404 follows a login that worked at the same address: only the login's says where.
    if (response.status === 404 && kind === 'password')
      throw tokenEndpointMissing(shown, detail, this.http.baseUrl, this.names.baseUrl);
    throw failedResponse(response, shown, this.secrets());
  }

  private readToken(response: HttpResponse, shown: string, kind: StoredToken['grant']): StoredToken {
    let json: unknown;
    try {
      json = JSON.parse(response.body);
    } catch {
      throw new ProtocolError(`${shown} answered HTTP 200 with a body that is not JSON`);
    }
    const parsed = TokenResponse.safeParse(json);
    if (!parsed.success) throw new ProtocolError(`${shown} answered HTTP 200 without a usable access_token`);
    const { access_token, expires_in, refresh_token } = parsed.data;
    // Secrets before checks: even a token refused here must never reach a log or a message.
    this.seenTokens.add(access_token);
    if (refresh_token) this.seenTokens.add(refresh_token);
    const source = { request: shown, endpoint: 'the token endpoint' };
    headerValueFrom(source, 'an access_token', access_token);
    if (refresh_token) requestValueFrom(source, 'a refresh_token', refresh_token);
    return {
      accessToken: access_token,
      refreshToken: refresh_token ?? null,
      // Without a lifetime the token is used until the API refuses it.
      renewAt:
        expires_in === undefined ? Number.POSITIVE_INFINITY : Date.now() + expires_in * 1000 * RENEW_AT_SHARE,
      grant: kind,
    };
  }
}

type RenewReason = 'due' | 'refused' | 'refused-again';

function oauthErrorCode(body: string): string | undefined {
  try {
    const parsed = OAuthError.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data.error : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A 404 from the token endpoint: the server at the base URL has no `/v1/oauth/token`, so the base URL is
 * not the marketplace's. Said as a setting error with the likeliest fix: a base URL that already ends in
 * `/v1` (shop-sync adds it), another path, or a host that is not the marketplace.
 */
function tokenEndpointMissing(shown: string, detail: string, baseUrl: URL, setting: string): ConfigError {
  const path = baseUrl.pathname.replace(/\/+$/, '');
  const root = sanitizeUrl(new URL('/', baseUrl), { pathOnly: false }).replace(/\/$/, '');
  const hint = /\/v1$/i.test(path)
    ? `${setting} ends in /v1, which shop-sync adds itself: set it to ${sanitizeUrl(new URL(`${path.slice(0, -3)}/`, baseUrl), { pathOnly: false }).replace(/\/$/, '')}`
    : path !== ''
      ? `${setting} has the path ${path}; the marketplace's API is usually at the root of its host (${root})`
      : `check that ${setting} (${root}) is the marketplace's address`;
  const said = detail === '' ? '' : ` (${detail})`;
  return new ConfigError(
    setting,
    `${shown} answered HTTP 404${said}: there is no token endpoint there; ${hint}.`,
  );
}

/** Which credentials the password grant's refusal points at, per RFC 6749 section 5.2. */
function credentialsRefused(refusal: GrantRefused, names: SettingNames): CredentialsError {
  const code = refusal.code ? `: ${refusal.code}` : '';
  if (refusal.code === 'invalid_grant') {
    return new CredentialsError(
      `The marketplace refused the shop owner's login (${names.username} / ${names.password}) with HTTP ${refusal.status}${code}.`,
      refusal.status,
    );
  }
  if (refusal.code === 'invalid_client' || refusal.code === 'unauthorized_client' || refusal.status === 401) {
    return new CredentialsError(
      `The marketplace refused the application's credentials (${names.clientId} / ${names.clientSecret}) with HTTP ${refusal.status}${code}.`,
      refusal.status,
    );
  }
  return new CredentialsError(
    `The marketplace refused the password grant with HTTP ${refusal.status}${code}: ${refusal.detail}`,
    refusal.status,
  );
}

/**
 * A token answer over the response cap is the token endpoint's fault, not the listing page's that
 * waited for the token: as a ResponseTooLargeError it would have the listing read ever smaller pages.
 */
function tokenTooLarge(error: unknown): never {
  if (error instanceof ResponseTooLargeError) throw new ProtocolError(`${error.message}.`, { cause: error });
  throw error;
}

/** `promise`, unless `signal` fires first: then its reason. */
function raced<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
