import type { SettingNames } from '../../config/settings.js';
import { CredentialsError, InterruptedError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { failedResponse } from '../http/failure.js';
import type { HttpClient } from '../http/http-client.js';
import { linkedSignal } from '../http/linked-signal.js';
import type { HttpResponse } from '../http/response.js';
import { RetryBudget, type RetryOptions, withRetry } from '../http/retry.js';
import { sanitizeUrl } from '../http/sanitize.js';
import type { TokenManager } from './token-manager.js';

export interface GetOptions<T> {
  /** Statuses handed to `read` instead of failing, besides 200 (e.g. 404 for a removed item). */
  readonly accept?: readonly number[];
  /** Turns the response into a value inside the attempt, so that a truncated body can throw
   * TransientError and be fetched again. `secrets` are to be kept out of anything quoted from the body. */
  readonly read: (response: HttpResponse, secrets: readonly string[]) => T;
  /** Called when the server pushes back (an answer `failedResponse` finds worth another attempt), before
   * the attempt fails: the listing reader slows its read-ahead. */
  readonly pushedBack?: () => void;
  readonly signal?: AbortSignal;
}

export interface AuthorizedOptions {
  readonly retry: RetryOptions;
  readonly logger: Logger;
  /** The client-wide stop: once aborted, pending and later requests reject with InterruptedError. */
  readonly signal?: AbortSignal;
  readonly settingNames: SettingNames;
}

/** GET requests with the shop owner's bearer token, renewed on 401 and retried within one budget. */
export class AuthorizedRequests {
  constructor(
    private readonly http: HttpClient,
    private readonly tokens: TokenManager,
    private readonly options: AuthorizedOptions,
  ) {}

  /** One logical request: its attempts and any token renewal it waits for share one retry budget. */
  async get<T>(path: string, options: GetOptions<T>): Promise<T> {
    const shown = `GET ${sanitizeUrl(path)}`;
    const stop = this.options.signal;
    if (stop?.aborted) throw interrupted(shown, stop.reason);
    const budget = new RetryBudget(this.options.retry);
    const linked = linkedSignal([stop, options.signal]);
    const signal = linked.signal;
    const context = { budget, logger: this.options.logger, signal };
    try {
      return await withRetry(context, async () => {
        const response = await this.sendAuthorized(path, shown, budget, signal);
        if (response.status === 200 || options.accept?.includes(response.status)) {
          return options.read(response, this.tokens.secrets());
        }
        const failure = failedResponse(response, shown, this.tokens.secrets());
        if (failure.retryable) options.pushedBack?.();
        throw failure;
      });
    } catch (error) {
      if (stop?.aborted) throw interrupted(shown, error);
      throw error;
    } finally {
      linked.unlink();
    }
  }

  /**
   * Sends with the current token; on 401 once more with a renewed one, and once more with a token from
   * the password grant (some servers refuse refreshed tokens). A third 401 is a credentials problem.
   */
  private async sendAuthorized(
    path: string,
    shown: string,
    budget: RetryBudget,
    signal: AbortSignal | undefined,
  ): Promise<HttpResponse> {
    const send = (token: string) =>
      this.http.request({
        method: 'GET',
        path,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        signal,
        deadline: budget.deadline,
      });
    let token = await this.tokens.accessToken(budget);
    let response = await send(token);
    if (response.status !== 401) return response;
    token = await this.tokens.afterRefusal(token, budget);
    response = await send(token);
    if (response.status !== 401) return response;
    token = await this.tokens.afterSecondRefusal(token, budget);
    response = await send(token);
    if (response.status !== 401) return response;
    throw new CredentialsError(
      `${shown} was refused with HTTP 401 even with a token freshly issued for the shop owner (${this.options.settingNames.username}).`,
      401,
    );
  }
}

function interrupted(shown: string, cause: unknown): InterruptedError {
  return new InterruptedError(`${shown} was stopped: shop-sync was asked to stop.`, { cause });
}
