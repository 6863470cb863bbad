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
  faults?: Partial<Faults>;
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
  | 'tokenValue';

export type GrantType = 'client_credentials' | 'password' | 'refresh_token';

export interface SimStats {
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
}

/** One listing request as the server saw it arrive. */
export interface ListingArrival {
  /** The page asked for (1 when absent or unreadable). */
  page: number;
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
  /** Merged into the current faults. */
  setFaults(f: Partial<Faults>): void;
  stats(): SimStats;
  /** Catalogue changes made by the moving-listing fault, oldest first. */
  moves(): Move[];
  /** Every access and refresh token issued so far: none may appear in a log, a message or a file. */
  issuedTokens(): string[];
  /** The listing requests, oldest first (the last 100,000). */
  listingArrivals(): ListingArrival[];
  close(): Promise<void>;
}
