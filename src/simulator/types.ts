import type { Item, TrackedField } from '../domain/item.js';

/** The simulator's own fake credentials: printing them is harmless, they open nothing real. */
export interface SimCredentials {
  clientId: string;
  clientSecret: string;
  username: string;
  password: string;
}

export interface SimulatorOptions {
  /** Catalogue size. */
  items?: number;
  /** Same seed: same catalogue, same mutations, same faults for the same sequence of requests. */
  seed?: number;
  host?: string;
  /** 0 picks an ephemeral port. */
  port?: number;
  /** Access-token lifetime in seconds; fractional values are honoured by the server (tests). */
  expiresIn?: number;
  /** Server-side maximum of `per_page`; larger requests are capped silently. */
  perPageCap?: number;
  /** `per_page` when the request has none. */
  defaultPerPage?: number;
  credentials?: Partial<SimCredentials>;
  shopId?: string;
  faults?: FaultsUpdate;
}

/**
 * The churn fault: a shop that sells and lists items while a client reads it. After listing responses
 * (counted from when churn was set), items are deleted and new items inserted at chosen positions of the
 * listing that response was read from (its filters and order), in the part already read (before the end
 * of the page just served: "behind") and in the part not yet read ("ahead"). Every change is logged
 * (`Simulator.churnLog`). Positions are exact in the default newest-first order; in another order a new
 * item lands where its values sort.
 */
export interface ChurnFault {
  /** The first churn event follows this listing response (1-based, counted from when churn was set). */
  from: number;
  /** Then one event after every this many responses. */
  every: number;
  /** At most this many events; 0: no limit. */
  times: number;
  /** Per event, items deleted at random positions before the end of the page just served. */
  deleteBehind: number;
  /** Per event, items deleted at random positions after the page just served. */
  deleteAhead: number;
  /** Per event, new items inserted at random positions before the end of the page just served. */
  insertBehind: number;
  /** Per event, new items inserted at random positions after the page just served. */
  insertAhead: number;
  /** Per event, the items at these positions (0-based, in the listing as the response saw it) are deleted. */
  deleteAt: readonly number[];
  /**
   * Per event, a new item is inserted at each of these positions (0-based, in the listing as the response
   * saw it): it lands right before the item that was there (at the end when the position is the length).
   */
  insertAt: readonly number[];
}

/** `Faults` as callers give them: churn may be partial (the rest takes its defaults). */
export type FaultsUpdate = Partial<Omit<Faults, 'churn'>> & { churn?: Partial<ChurnFault> | null };

/** One change the churn fault made to the catalogue. */
export interface ChurnChange {
  /** 1-based, increasing over the simulator's life: `churnLog(since)` returns the changes after `since`. */
  seq: number;
  kind: 'delete' | 'insert';
  id: string;
  /** The churn-counted listing response it followed (0: made by `churnNow`). */
  response: number;
  /** Its position in the listing it was made in, as that listing was before the event. */
  position: number;
  /** Before the end of the page just served (already read), or after it. */
  side: 'behind' | 'ahead';
  /** The listing it was made in: its order and filters, as `order|name=value&...` ('newest|' unfiltered). */
  listing: string;
  /** When it happened (ms since the epoch). */
  atMs: number;
}

export interface MovingFault {
  /** Every this many listing requests, a new item appears at the front of the newest-first listing. */
  insertBeforeEvery: number;
  /** Every this many listing requests, an item before the reader's position disappears. */
  removeBehindEvery: number;
}

export interface Faults {
  rate429: number;
  /** Seconds (may be 0), or 'date' for an HTTP date one second ahead. */
  retryAfter: number | 'date';
  rate5xx: number;
  dropRate: number;
  latencyMs: number;
  malformedRate: number;
  /** Pages shorter than per_page that lose nothing: the next page starts where this one ended. */
  shortPageRate: number;
  /**
   * Per listing request: the answer leaves out its last 1-3 items (never all) although the next page
   * starts after the full page, so they are lost to a client that believes it. Asked again, the page
   * may answer fully.
   */
  lossyShortPageRate: number;
  /** Pages whose first answer leaves out its last item (and is whole after), as the rate above. */
  lossyShortPages: readonly number[];
  /** Per listing request past page 1 and before the end: a 404, 204 or empty 200 `[]` (in turn) instead
   * of the page; never twice in a row for the same page. */
  falseEndRate: number;
  /** Pages that answer a false end the first time they are asked (and properly after). */
  falseEndPages: readonly number[];
  /** When > 0, every listing response body is sent one byte every this many milliseconds. */
  dripMs: number;
  refreshDeadEnd: boolean;
  ignorePage: boolean;
  moving: MovingFault | null;
  /**
   * Values the token endpoint hands out in place of the tokens it issues (hostile-token tests: CR/LF, NUL,
   * characters beyond Latin-1). The API refuses them like any unknown token.
   */
  tokenValues: TokenValues | null;
  churn: ChurnFault | null;
}

export interface TokenValues {
  accessToken?: string;
  refreshToken?: string;
}

/** An item exactly as a correct client must normalise it. */
export type SimItem = Omit<Item, 'raw'>;

export interface Mutation {
  prices?: number;
  quantities?: number;
  /** Flip `published`. */
  publish?: number;
  titles?: number;
  add?: number;
  remove?: number;
  /** Previously removed ids, brought back with their last values. */
  restore?: readonly string[];
  /** Listed items that start sending a hostile value in one member (see `Poison`); applied after the rest. */
  poison?: readonly Poison[];
  /** Listed items whose poisoned members go back to what they sent before (all of them). */
  cure?: readonly string[];
  /** Re-render prices in another JSON representation without changing their value. */
  representation?: number;
}

/**
 * One member of one item sent as chosen bytes: `json` (JSON text, written as is: `"1e999999999"`,
 * `9223372036854775807`, `"\\ud800"`), or `hex` (raw bytes, e.g. invalid UTF-8 `22ff22`). `padZeros`
 * inserts that many `0` digits after the value's first digit (a literal of millions of digits, without
 * sending them to the admin port). A member the item does not send is added; `id` poisons the id the
 * item sends, not the one it is known by (its URL keeps working).
 */
export interface Poison {
  id: string;
  field: string;
  json?: string;
  hex?: string;
  padZeros?: number;
}

export interface FieldChange {
  before: unknown;
  after: unknown;
}

export interface MutationTruth {
  added: string[];
  removed: string[];
  /** Only real value changes; `representation` produces none. */
  updated: Array<{ id: string; fields: Partial<Record<TrackedField, FieldChange>> }>;
}

export type FaultKind =
  | 'status429'
  | 'status5xx'
  | 'drop'
  | 'malformed'
  | 'shortPage'
  | 'lossyShortPage'
  | 'falseEnd'
  | 'drip'
  | 'refreshDeadEnd'
  | 'ignorePage'
  | 'moveInsert'
  | 'moveRemove'
  | 'tokenValue'
  | 'churnDelete'
  | 'churnInsert';

export type GrantType = 'client_credentials' | 'password' | 'refresh_token';

/** One shop's counters. */
export interface ShopStats {
  requests: number;
  listingRequests: number;
  itemRequests: number;
  /** Tokens issued, by grant. */
  tokenRequests: Record<GrantType, number>;
  /** Token requests refused (invalid client, grant or request). */
  tokenRefusals: number;
  faultsInjected: Record<FaultKind, number>;
  /** The most listing requests the server was answering at once (from arrival to the last byte sent). */
  peakListingConcurrency: number;
  /** The same among the requests answered in full (`Marketplace.peakAnsweredListingConcurrency`). */
  peakAnsweredListingConcurrency: number;
}

/** What a server (one shop's, or a fleet's) counted: its shops' counters and its own connections. */
export interface SimStats extends ShopStats {
  /** TCP connections the server accepted, from any client, for any of its shops: a client that keeps
   * its connections alive opens few. */
  connections: number;
  /** Of those, the ones still open. */
  openConnections: number;
}

/** One listing request as the server saw it arrive. */
export interface ListingArrival {
  /** The page asked for (1 when absent or unreadable). */
  page: number;
  /** The `per_page` asked for, before the server's cap (its default when absent or unreadable). */
  perPage: number;
  /** How many listing requests the server was answering at that moment, this one included. */
  concurrency: number;
}

/** One change the moving-listing fault made to the catalogue while a client was reading it. */
export interface Move {
  kind: 'insert' | 'remove';
  /** The listing request (1-based count) that the move happened before. */
  request: number;
  /** The item inserted or removed. */
  id: string;
  /**
   * insert: the item the reader sees twice (last of the previous page, first of this one).
   * remove: the item the reader skips although it is still listed.
   */
  affectedId: string | null;
}

export interface Simulator {
  /** 'http://HOST:PORT', no trailing slash. */
  readonly baseUrl: string;
  readonly credentials: SimCredentials;
  readonly shopId: string;
  /** The current catalogue in the default order (newest first), with canonical values. */
  truth(): SimItem[];
  /** Renders every item's JSON now (in slices, serving meanwhile) rather than on first read. */
  prerender(signal?: AbortSignal): Promise<void>;
  mutate(m: Mutation): MutationTruth;
  /** Merged into the current faults; giving `churn` restarts its response count. */
  setFaults(f: FaultsUpdate): void;
  stats(): SimStats;
  /** Catalogue changes made by the moving-listing fault, oldest first. */
  moves(): Move[];
  /** Changes made by the churn fault (and `churnNow`) with `seq` > `since` (default 0), oldest first. */
  churnLog(since?: number): ChurnChange[];
  /**
   * One churn event now, in the listing of `query` (a listing query string such as
   * `f.shipping_to=IT`; default the whole newest-first listing): positions as in `ChurnFault`.
   */
  churnNow(
    positions: { deleteAt?: readonly number[]; insertAt?: readonly number[] },
    query?: string,
  ): ChurnChange[];
  /** The ids a client reading the listing of `query` now would get, in order; counts no request. */
  listedIds(query?: string): string[];
  /** Every access and refresh token issued so far: none may appear in a log, a message or a file. */
  issuedTokens(): string[];
  /** The listing requests, oldest first (the last 100,000). */
  listingArrivals(): ListingArrival[];
  close(): Promise<void>;
}
