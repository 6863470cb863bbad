import { CredentialsError } from '../errors.js';
import type { Logger } from '../log.js';
import type { TokenManager } from './auth.js';
import type { HttpClient, HttpResponse } from './http.js';
import { failedResponse, type RetryOptions, withRetry } from './retry.js';
import { sanitizeUrl } from './sanitize.js';
import { serverMessage } from './server-message.js';

export interface GetOptions<T> {
  /** Statuses handed to `read` instead of failing, besides 200 (e.g. 404 for a removed item). */
  readonly accept?: readonly number[];
  /** Turns the response into a value inside the attempt, so that a truncated body can throw
   * TransientError and be fetched again. `secrets` are to be kept out of anything quoted from the body. */
  readonly read: (response: HttpResponse, secrets: readonly string[]) => T;
  readonly signal?: AbortSignal;
}

/** GET requests with the shop owner's bearer token, renewed on 401 and retried per the retry policy. */
export class AuthorizedRequests {
  constructor(
    private readonly http: HttpClient,
    private readonly tokens: TokenManager,
    private readonly retry: RetryOptions,
    private readonly logger: Logger,
  ) {}

  get<T>(path: string, options: GetOptions<T>): Promise<T> {
    const shown = `GET ${sanitizeUrl(path)}`;
    const context = { options: this.retry, logger: this.logger, signal: options.signal };
    return withRetry(context, async () => {
      const response = await this.sendAuthorized(path, shown, options.signal);
      if (response.status === 200 || options.accept?.includes(response.status)) {
        return options.read(response, this.tokens.secrets());
      }
      const detail = serverMessage(response.body, this.tokens.secrets());
      throw failedResponse(shown, response.status, detail, response.headers['retry-after']);
    });
  }

  /**
   * Sends with the current token; on 401 once more with a renewed one, and once more with a token from
   * the password grant (some servers refuse refreshed tokens). A third 401 is a credentials problem.
   */
  private async sendAuthorized(
    path: string,
    shown: string,
    signal: AbortSignal | undefined,
  ): Promise<HttpResponse> {
    const send = (token: string) =>
      this.http.request({
        method: 'GET',
        path,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        signal,
      });
    let token = await this.tokens.accessToken();
    let response = await send(token);
    if (response.status !== 401) return response;
    token = await this.tokens.afterRefusal(token);
    response = await send(token);
    if (response.status !== 401) return response;
    token = await this.tokens.afterSecondRefusal(token);
    response = await send(token);
    if (response.status !== 401) return response;
    throw new CredentialsError(
      `${shown} was refused with HTTP 401 even with a token freshly issued for the shop owner (MARKETPLACE_USERNAME).`,
      401,
    );
  }
}
