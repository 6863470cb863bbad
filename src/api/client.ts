import { ENV_SETTING_NAMES, type SettingNames } from '../config/settings.js';
import type { Item } from '../domain/item.js';
import { InvalidItemError, ProtocolError } from '../errors.js';
import { type Logger, silentLogger } from '../log.js';
import { AuthorizedRequests } from './auth/authorized-requests.js';
import { type TokenEvents, TokenManager } from './auth/token-manager.js';
import type { TokenStore } from './auth/token-store.js';
import { HttpClient, type HttpEvents, type HttpTimeouts } from './http/http-client.js';
import type { HttpResponse } from './http/response.js';
import { DEFAULT_RETRY, type RetryOptions } from './http/retry.js';
import { sanitizeUrl } from './http/sanitize.js';
import { isRequestSafe } from './http/server-values.js';
import type { SharedPools } from './http/shared-pools.js';
import { normaliseItem } from './item/item-schema.js';
import type { SentIndex } from './item/known-elements.js';
import { parseCheckpoint } from './listing/checkpoint.js';
import type { KnownBodies } from './listing/known-bodies.js';
import { idsListed, NO_SUCH_PAGE } from './listing/listing-start.js';
import {
  type ListingBodyContext,
  PAST_END_STATUSES,
  parseJsonBody,
  type RawPage,
  readListingBody,
} from './listing/page-body.js';
import { DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_PAGES, singlePage } from './listing/page-by-page.js';
import type { ItemPage, PageRequest } from './listing/paginator.js';
import { type ListingQuery, listingPath, validateListingQuery } from './listing/query.js';
import { readListing } from './listing/read-listing.js';
import type { ListingWindow } from './listing/window.js';

export type { ListingFilters } from '../config/listing-filters.js';
export type { SettingNames } from '../config/settings.js';
export type { StoredToken, TokenStore } from './auth/token-store.js';
export type { RetryOptions } from './http/retry.js';
export { SharedPools } from './http/shared-pools.js';
export type { ItemPage } from './listing/paginator.js';
export type { FilterEncoding, ListingQuery } from './listing/query.js';

export interface MarketplaceOptions {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly username: string;
  readonly password: string;
  readonly allowInsecure?: boolean;
  readonly timeouts?: Partial<HttpTimeouts>;
  readonly maxResponseBytes?: number;
  readonly retry?: Partial<RetryOptions>;
  readonly tokenStore?: TokenStore;
  readonly logger?: Logger;
  /** Client-wide stop: reaches HTTP requests, retry sleeps and token renewals; once aborted every
   * pending and later call rejects with InterruptedError. */
  readonly signal?: AbortSignal;
  readonly events?: MarketplaceEvents;
  /** The credential settings as the user wrote them, named by messages about rejected credentials. */
  readonly settingNames?: SettingNames;
  /** Requests in flight at most (SYNC_MAX_IN_FLIGHT): the connection pool allows that many and one for a login. */
  readonly maxInFlight?: number;
  /** The process's connection pools, when it runs many syncs: borrowed, and left open by `close`. */
  readonly pools?: SharedPools;
}

/** What the client saw, for metrics: every marketplace response status ('network' for a failure
 * without one) and every token obtained, by grant. */
export interface MarketplaceEvents extends HttpEvents, TokenEvents {}

export interface ReadItemsOptions {
  /**
   * Where an interrupted run's reading stopped: the `checkpoint` of the last page it staged, as the store
   * kept it. One that cannot be read starts the reading over.
   */
  readonly resume?: string;
  /** The most listing requests in flight at once; 1 reads one window at a time. */
  readonly maxInFlight?: number;
  /** Listing requests before giving up on ever seeing the end. */
  readonly maxRequests?: number;
  /** The texts the store has read before: an item sent as one of them is not read again (`knownElements`). */
  readonly known?: SentIndex;
  /** Bodies read in full before (with `known`): one received again byte for byte is not parsed. */
  readonly bodies?: KnownBodies;
  /** How many items the shop's last complete run listed (`ListingReadOptions.listedBefore`). */
  readonly listedBefore?: number;
}

export type ReadItemsQuery = ListingQuery & ReadItemsOptions;

/** The `per_page` asked for when the query names none. */
export const DEFAULT_PER_PAGE = 100;

/** The marketplace as shop-sync uses it: the shop's items, page by page, and single items by URL. */
export class MarketplaceClient {
  private readonly http: HttpClient;
  private readonly requests: AuthorizedRequests;
  private readonly baseUrlSetting: string;
  private readonly maxInFlight: number;
  private readonly budgetMs: number;

  constructor(options: MarketplaceOptions) {
    this.maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    const logger = options.logger ?? silentLogger();
    const retry = { ...DEFAULT_RETRY, ...options.retry };
    this.budgetMs = retry.budgetMs;
    const settingNames = options.settingNames ?? ENV_SETTING_NAMES;
    this.baseUrlSetting = settingNames.baseUrl;
    this.http = new HttpClient({
      baseUrl: options.baseUrl,
      allowInsecure: options.allowInsecure,
      timeouts: options.timeouts,
      maxResponseBytes: options.maxResponseBytes,
      connections: this.maxInFlight + 1,
      pools: options.pools,
      events: options.events,
      baseUrlSetting: settingNames.baseUrl,
    });
    const tokens = new TokenManager({
      http: this.http,
      credentials: {
        clientId: options.clientId,
        clientSecret: options.clientSecret,
        username: options.username,
        password: options.password,
      },
      logger,
      store: options.tokenStore,
      signal: options.signal,
      events: options.events,
      settingNames,
    });
    this.requests = new AuthorizedRequests(this.http, tokens, {
      retry,
      logger,
      signal: options.signal,
      settingNames,
    });
  }

  /** The marketplace's origin (scheme, host and port of the base URL): what a store remembers answered. */
  get origin(): string {
    return this.http.baseUrl.origin;
  }

  /** The store shows this origin answered the shop before: failing to reach it is an outage from the first request. */
  knownToAnswer(): void {
    this.http.knownToAnswer();
  }

  /** Every item listed from the first request to the confirmed end; see `readListing` for the
   * guarantees. Up to `maxInFlight` requests at once, by default the client's. */
  readItems(query: ReadItemsQuery = {}): AsyncGenerator<ItemPage> {
    const { resume, maxInFlight, maxRequests, known, bodies, listedBefore, ...listing } = query;
    validateListingQuery(listing);
    const before = { known, bodies };
    return readListing((window, request) => this.listingPage(listing, window, request, before), {
      perPage: listing.perPage ?? DEFAULT_PER_PAGE,
      resume: parseCheckpoint(resume),
      maxInFlight: maxInFlight ?? this.maxInFlight,
      maxRequests: maxRequests ?? DEFAULT_MAX_PAGES,
      budgetMs: this.budgetMs,
      pageIds: (page, perPage) => this.pageIds(listing, page, perPage),
      listedBefore,
    });
  }

  /** Page 1 of the listing as the server serves it, in one authorised read (no re-reads, no read-ahead):
   * what `check` shows to prove settings and credentials. */
  async firstPage(query: ListingQuery = {}): Promise<ItemPage> {
    validateListingQuery(query);
    const window = { page: 1, perPage: query.perPage ?? DEFAULT_PER_PAGE, start: 0 };
    return singlePage(1, await this.listingPage(query, window, { first: true }));
  }

  private listingPage(
    listing: ListingQuery,
    window: ListingWindow,
    request: PageRequest,
    before: Pick<ListingBodyContext, 'known' | 'bodies'> = {},
  ): Promise<RawPage> {
    const path = listingPath({ ...listing, perPage: window.perPage }, window.page);
    const shown = `GET ${sanitizeUrl(path)}`;
    return this.requests.get(path, {
      signal: request.signal,
      accept: request.first ? undefined : PAST_END_STATUSES,
      pushedBack: request.pushedBack,
      read: (response, secrets) =>
        readListingBody(response, { shown, mayEnd: !request.first, secrets, ...before }),
    });
  }

  /** The ids `page` lists at `perPage` a page (see `ListingStart`). */
  private async pageIds(
    listing: ListingQuery,
    page: number,
    perPage: number,
  ): Promise<{ ids: readonly string[]; shown: string }> {
    const path = listingPath({ ...listing, perPage }, page);
    const shown = `GET ${sanitizeUrl(path)}`;
    const ids = await this.requests.get(path, {
      accept: NO_SUCH_PAGE,
      read: (response) => idsListed(response, shown),
    });
    return { ids, shown };
  }

  /**
   * The item at `url` (an item's own `url`, absolute or relative to the base URL), or null when the
   * marketplace no longer has it (404, 410). Only URLs below the base URL are fetched: the token must
   * not travel to any other host.
   */
  async fetchItem(url: string): Promise<Item | null> {
    // URL parsing drops tabs and line breaks silently: such a url would fetch another item, whose 404
    // would pass for this one's removal.
    if (!isRequestSafe(url) || /\s/.test(url)) {
      throw new ProtocolError(
        `Refusing to fetch an item by its url: the listing (GET /v1/sell/shop/items) returned a url that cannot be sent in a request.`,
      );
    }
    const path = this.http.pathWithin(url);
    if (path === undefined) {
      const shownUrl = sanitizeUrl(this.http.resolve(url) ?? url, { pathOnly: false });
      throw new ProtocolError(
        `Refusing to fetch ${shownUrl}: it is not below ${this.baseUrlSetting}, and the token must not be sent elsewhere.`,
      );
    }
    const shown = `GET ${sanitizeUrl(path)}`;
    return this.requests.get(path, { accept: [404, 410], read: (response) => readItem(response, shown) });
  }

  /** Stops what is still in flight; closes the connection pool unless it is the process's (`pools`). */
  close(): Promise<void> {
    return this.http.close();
  }
}

function readItem(response: HttpResponse, shown: string): Item | null {
  if (response.status !== 200) return null;
  const result = normaliseItem(parseJsonBody(response, shown), response.body, 0);
  if (!result.ok)
    throw new InvalidItemError(
      `${shown} answered an item that cannot be read: ${result.invalid.reason}.`,
      result.invalid.reason,
    );
  return result.item;
}
