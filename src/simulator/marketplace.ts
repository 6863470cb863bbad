import { Catalogue } from './catalogue.js';
import { Churn } from './churn.js';
import { FaultDice, type ListingFault, mergeFaults } from './faults.js';
import { applyMutation } from './mutations.js';
import { PageFaults } from './page-faults.js';
import { PageLayout, type PageWindow } from './paging.js';
import { Prng } from './prng.js';
import type { SimRecord } from './record.js';
import { type RenderContext, recordJson, renderContext, toSimItem } from './render.js';
import { type ListingQuery, parseListingQuery, QueryError } from './request-query.js';
import type { Settings } from './sim-settings.js';
import { TokenIssuer } from './tokens.js';
import type {
  ChurnChange,
  FaultKind,
  Faults,
  FaultsUpdate,
  GrantType,
  ListingArrival,
  Move,
  MovingFault,
  Mutation,
  MutationTruth,
  ShopStats,
  SimItem,
} from './types.js';

/** An HTTP answer. `cut`: send the headers and part of the body, then destroy the connection.
 * `dripMs`: send the body one byte every this many milliseconds. */
export interface Reply {
  status: number;
  body: string | Buffer;
  headers?: Record<string, string>;
  cut?: boolean;
  dripMs?: number;
}

const SERVER_ERRORS = [500, 502, 503] as const;
/** Listing arrivals kept for `listingArrivals()`. */
const ARRIVALS_KEPT = 100_000;
const OPEN_BRACKET = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE_BRACKET = Buffer.from(']');

function json(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return headers ? { status, body: JSON.stringify(value), headers } : { status, body: JSON.stringify(value) };
}

function unauthorized(reason: string): Reply {
  return json(
    401,
    { error: 'invalid_token', message: reason },
    { 'www-authenticate': 'Bearer error="invalid_token"' },
  );
}

function serverError(status: (typeof SERVER_ERRORS)[number]): Reply {
  if (status === 502) {
    return {
      status,
      body: '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>',
      headers: { 'content-type': 'text/html' },
    };
  }
  return json(status, { error: 'server_error', message: `simulated HTTP ${status}` });
}

function zeroCounts<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
}

const FAULT_KINDS: readonly FaultKind[] = [
  'status429',
  'status5xx',
  'drop',
  'malformed',
  'shortPage',
  'lossyShortPage',
  'falseEnd',
  'drip',
  'refreshDeadEnd',
  'ignorePage',
  'moveInsert',
  'moveRemove',
  'tokenValue',
  'churnDelete',
  'churnInsert',
];
const GRANTS: readonly GrantType[] = ['client_credentials', 'password', 'refresh_token'];

/** The marketplace's behaviour, independent of HTTP transport: each request in, one Reply out. */
export class Marketplace {
  private readonly catalogue: Catalogue;
  private readonly tokens: TokenIssuer;
  private readonly layout: PageLayout;
  private readonly dice: FaultDice;
  private readonly pageFaults: PageFaults;
  /** Listing requests as they arrived, and their lives from arrival to end on a clock of those events
   * (`ARRIVALS_KEPT` at most). */
  private readonly arrivals: { readonly arrival: ListingArrival; readonly span: ListingSpan }[] = [];
  private listingsOpen = 0;
  private listingEvents = 0;
  private readonly mutationRng: Prng;
  private readonly moveRng: Prng;
  private readonly moveLog: Move[] = [];
  private readonly churn: Churn;
  private readonly counters: Omit<ShopStats, 'peakAnsweredListingConcurrency'> = {
    requests: 0,
    listingRequests: 0,
    itemRequests: 0,
    tokenRequests: zeroCounts(GRANTS),
    tokenRefusals: 0,
    faultsInjected: zeroCounts(FAULT_KINDS),
    peakListingConcurrency: 0,
  };
  private currentFaults: Faults;
  private movingRequests = 0;
  private ctx: RenderContext;

  constructor(private readonly settings: Settings) {
    this.catalogue = new Catalogue(settings.seed, settings.items);
    this.tokens = new TokenIssuer(settings.credentials, settings.expiresIn);
    this.layout = new PageLayout(settings.seed);
    this.dice = new FaultDice(settings.seed);
    this.pageFaults = new PageFaults(settings.seed);
    this.mutationRng = new Prng(settings.seed ^ 0x3a7e);
    this.moveRng = new Prng(settings.seed ^ 0x30fe);
    this.churn = new Churn(settings.seed, this.catalogue);
    this.currentFaults = settings.faults;
    this.layout.setShortPageRate(settings.faults.shortPageRate);
    this.ctx = renderContext('', settings.shopId);
  }

  get faults(): Readonly<Faults> {
    return this.currentFaults;
  }

  /** Item URLs point at the server, whose address is known once it listens. */
  serveAt(baseUrl: string): void {
    this.ctx = renderContext(baseUrl, this.settings.shopId);
  }

  /**
   * Renders every item's JSON ahead of the first read, a slice at a time so that requests are served
   * meanwhile: a large catalogue's first pass then runs at full speed instead of rendering as it goes.
   */
  async prerender(signal?: AbortSignal, sliceSize = 5000): Promise<void> {
    const records = this.catalogue.records;
    for (let start = 0; start < records.length && !signal?.aborted; start += sliceSize) {
      for (const record of records.slice(start, start + sliceSize)) recordJson(record, this.ctx);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  countRequest(): void {
    this.counters.requests += 1;
  }

  /**
   * A listing request with `params` arrived; `listingAnswered` is called with what this returns once its
   * answer is sent or abandoned.
   */
  listingArrived(params: URLSearchParams): ListingSpan {
    this.listingsOpen += 1;
    this.counters.peakListingConcurrency = Math.max(this.counters.peakListingConcurrency, this.listingsOpen);
    const span: ListingSpan = {
      opened: this.listingEvents++,
      closed: Number.POSITIVE_INFINITY,
      answered: true,
    };
    if (this.arrivals.length === ARRIVALS_KEPT) this.arrivals.shift();
    this.arrivals.push({
      arrival: {
        page: Number(params.get('page')) || 1,
        perPage: Number(params.get('per_page')) || this.settings.defaultPerPage,
        concurrency: this.listingsOpen,
      },
      span,
    });
    return span;
  }

  /** `span`'s request ended: `answered` when its answer was sent in full, not abandoned by the client. */
  listingAnswered(span: ListingSpan, answered: boolean): void {
    this.listingsOpen -= 1;
    span.closed = this.listingEvents++;
    span.answered = answered;
  }

  /**
   * The most listing requests open at once among those answered in full. A request its client aborted
   * stays open here until the close of its connection is read, which may come after the client's next
   * request: `peakListingConcurrency` counts it, this does not.
   */
  private peakAnsweredListingConcurrency(): number {
    const steps: [at: number, step: number][] = this.arrivals
      .filter(({ span }) => span.answered)
      .flatMap(({ span }): [number, number][] => [
        [span.opened, 1],
        [span.closed, -1],
      ])
      .sort((a, b) => a[0] - b[0]);
    let open = 0;
    let peak = 0;
    for (const [, step] of steps) {
      open += step;
      peak = Math.max(peak, open);
    }
    return peak;
  }

  listingArrivals(): ListingArrival[] {
    return this.arrivals.map(({ arrival }) => ({ ...arrival }));
  }

  token(params: Readonly<Record<string, string>>): Reply {
    const result = this.tokens.grant(params);
    if (result.status === 200) this.counters.tokenRequests[result.grant] += 1;
    else this.counters.tokenRefusals += 1;
    const hostile = this.currentFaults.tokenValues;
    if (result.status === 200 && hostile) {
      const body = { ...result.body };
      if (hostile.accessToken !== undefined) body.access_token = hostile.accessToken;
      if (hostile.refreshToken !== undefined && 'refresh_token' in body)
        body.refresh_token = hostile.refreshToken;
      this.countFault('tokenValue');
      return json(200, body, { 'cache-control': 'no-store' });
    }
    return json(result.status, result.body, { 'cache-control': 'no-store' });
  }

  listing(authorization: string | undefined, params: URLSearchParams): Reply {
    this.counters.listingRequests += 1;
    const denied = this.authorize(authorization, true);
    if (denied) return denied;
    let query: ListingQuery;
    try {
      query = parseListingQuery(params, this.settings);
    } catch (error) {
      if (error instanceof QueryError) return json(422, { error: error.error, message: error.message });
      throw error;
    }
    if (this.currentFaults.ignorePage && query.page !== 1) {
      this.countFault('ignorePage');
      query.page = 1;
    }
    if (this.currentFaults.moving) this.move(this.currentFaults.moving, query);
    const fault = this.dice.roll(this.currentFaults);
    if (fault === 'status429') return this.tooManyRequests();
    if (fault === 'status5xx') {
      this.countFault('status5xx');
      return serverError(SERVER_ERRORS[this.counters.faultsInjected.status5xx % SERVER_ERRORS.length] ?? 500);
    }
    const records = this.listed(query);
    const window = this.window(query, records.length);
    const falseEnd = this.pageFaults.falseEnd(this.currentFaults, query.page, window.start < records.length);
    if (falseEnd) {
      this.countFault('falseEnd');
      return { ...falseEnd };
    }
    const reply = this.dripping(this.answerPage(records, query.page, window, fault));
    // After the answer is made: the churn moves the listing between this response and the next.
    if (this.currentFaults.churn)
      this.count(
        this.churn.afterResponse(this.currentFaults.churn, query, records, window.start + window.size),
      );
    return reply;
  }

  churnLog(since = 0): ChurnChange[] {
    return this.churn.changesSince(since);
  }

  churnNow(
    positions: { deleteAt?: readonly number[]; insertAt?: readonly number[] },
    query = '',
  ): ChurnChange[] {
    for (const name of ['deleteAt', 'insertAt'] as const) {
      for (const position of positions[name] ?? []) {
        if (!Number.isInteger(position) || position < 0)
          throw new RangeError(`${name} positions must be integers >= 0, got ${position}`);
      }
    }
    const parsed = parseListingQuery(new URLSearchParams(query), this.settings);
    const picks = { deleteAt: positions.deleteAt ?? [], insertAt: positions.insertAt ?? [] };
    return this.count(this.churn.apply(parsed, this.listed(parsed), 0, 0, picks));
  }

  listedIds(query = ''): string[] {
    return this.listed(parseListingQuery(new URLSearchParams(query), this.settings)).map(
      (record) => record.id,
    );
  }

  item(authorization: string | undefined, id: string): Reply {
    this.counters.itemRequests += 1;
    const denied = this.authorize(authorization, false);
    if (denied) return denied;
    const record = this.catalogue.get(id);
    if (record) return { status: 200, body: recordJson(record, this.ctx) };
    const message = this.catalogue.wasRemoved(id) ? `item ${id} was removed` : `no item ${id}`;
    return json(404, { error: 'not_found', message });
  }

  truth(): SimItem[] {
    return this.catalogue.records.map((record) => toSimItem(record, this.ctx));
  }

  mutate(m: Mutation): MutationTruth {
    return applyMutation(this.catalogue, m, this.mutationRng);
  }

  setFaults(update: FaultsUpdate): void {
    this.currentFaults = mergeFaults(this.currentFaults, update);
    if (update.churn !== undefined) this.churn.restart();
    this.pageFaults.resetListed(update);
    this.layout.setShortPageRate(this.currentFaults.shortPageRate);
  }

  stats(): ShopStats {
    return {
      ...structuredClone(this.counters),
      peakAnsweredListingConcurrency: this.peakAnsweredListingConcurrency(),
    };
  }

  issuedTokens(): string[] {
    // Hostile values handed out count as issued: they too must never reach a log or a message.
    const hostile = this.currentFaults.tokenValues;
    const handedOut = [hostile?.accessToken, hostile?.refreshToken].filter((v) => v !== undefined);
    return [...this.tokens.issued(), ...handedOut];
  }

  moves(): Move[] {
    return this.moveLog.map((move) => ({ ...move }));
  }

  private authorize(authorization: string | undefined, sell: boolean): Reply | null {
    const check = this.tokens.check(authorization);
    if (!check.ok) return unauthorized(check.reason);
    if (check.kind === 'refreshed' && this.currentFaults.refreshDeadEnd) {
      this.countFault('refreshDeadEnd');
      return unauthorized('access token rejected');
    }
    if (sell && check.kind === 'buy') {
      // 403, not 401: the token is valid, and refreshing it would not help.
      return json(403, {
        error: 'insufficient_scope',
        message:
          'a client_credentials token is valid for buy operations only; /sell needs the password grant',
      });
    }
    return null;
  }

  private tooManyRequests(): Reply {
    this.countFault('status429');
    const { retryAfter } = this.currentFaults;
    const value = retryAfter === 'date' ? new Date(Date.now() + 1000).toUTCString() : String(retryAfter);
    return json(429, { error: 'rate_limited', message: 'too many requests' }, { 'retry-after': value });
  }

  private listed(query: ListingQuery): readonly SimRecord[] {
    return this.catalogue.listing(query.order, query.filters, query.filterKey);
  }

  private window(query: ListingQuery, total: number): PageWindow {
    return this.layout.window(query.page, query.perPage, total);
  }

  private answerPage(
    records: readonly SimRecord[],
    page: number,
    window: PageWindow,
    fault: ListingFault,
  ): Reply {
    const body = this.page(records, page, window);
    if (fault === 'drop') {
      this.countFault('drop');
      return { status: 200, body, cut: true };
    }
    if (fault === 'malformed') {
      this.countFault('malformed');
      return { status: 200, body: body.subarray(0, Math.max(1, body.length >> 1)) };
    }
    return { status: 200, body };
  }

  private dripping(reply: Reply): Reply {
    if (this.currentFaults.dripMs === 0) return reply;
    this.countFault('drip');
    return { ...reply, dripMs: this.currentFaults.dripMs };
  }

  private page(records: readonly SimRecord[], page: number, { start, size, short }: PageWindow): Buffer {
    const full = Math.min(start + size, records.length);
    if (short && full < records.length) this.countFault('shortPage');
    const lost = this.pageFaults.lost(this.currentFaults, page, full - start);
    if (lost > 0) this.countFault('lossyShortPage');
    const end = full - lost;
    const parts: Buffer[] = [OPEN_BRACKET];
    let length = 2;
    for (let i = start; i < end; i += 1) {
      const json = recordJson(records[i] as SimRecord, this.ctx);
      if (i > start) parts.push(COMMA);
      parts.push(json);
      length += json.length + (i > start ? 1 : 0);
    }
    parts.push(CLOSE_BRACKET);
    return Buffer.concat(parts, length);
  }

  /** The moving-listing fault: real catalogue changes around the reader's position, logged. */
  private move(moving: MovingFault, query: ListingQuery): void {
    this.movingRequests += 1;
    const request = this.counters.listingRequests;
    if (moving.insertBeforeEvery > 0 && this.movingRequests % moving.insertBeforeEvery === 0) {
      const before = this.listed(query);
      const { start } = this.window(query, before.length);
      const lastOfPrevious = start > 0 ? before[start - 1] : undefined;
      const inserted = this.catalogue.addNew(this.moveRng);
      const repeated =
        lastOfPrevious && this.listed(query)[start] === lastOfPrevious ? lastOfPrevious.id : null;
      this.moveLog.push({ kind: 'insert', request, id: inserted.id, affectedId: repeated });
      this.countFault('moveInsert');
    }
    if (moving.removeBehindEvery > 0 && this.movingRequests % moving.removeBehindEvery === 0) {
      const before = this.listed(query);
      const { start } = this.window(query, before.length);
      const behind = Math.min(start, before.length);
      if (behind === 0) return;
      const victim = before[this.moveRng.int(behind)] as SimRecord;
      const skipped = before[start]?.id ?? null;
      this.catalogue.remove(victim);
      this.moveLog.push({ kind: 'remove', request, id: victim.id, affectedId: skipped });
      this.countFault('moveRemove');
    }
  }

  private count(changes: ChurnChange[]): ChurnChange[] {
    for (const change of changes) this.countFault(change.kind === 'delete' ? 'churnDelete' : 'churnInsert');
    return changes;
  }

  private countFault(kind: FaultKind): void {
    this.counters.faultsInjected[kind] += 1;
  }
}

/** One listing request's life at the server, on the clock of `listingEvents`. */
export interface ListingSpan {
  readonly opened: number;
  closed: number;
  answered: boolean;
}
