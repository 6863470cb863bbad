import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { countConnections, handler, listen } from './http-server.js';
import { Marketplace } from './marketplace.js';
import { resolveOptions } from './sim-settings.js';
import type {
  ChurnChange,
  FaultsUpdate,
  Mutation,
  MutationTruth,
  ShopStats,
  SimCredentials,
  SimStats,
  SimulatorOptions,
} from './types.js';

/** One shop of a fleet: its own catalogue, login and base URL (`<fleet>/shops/<index>`). */
export interface FleetShop {
  readonly index: number;
  readonly baseUrl: string;
  readonly credentials: SimCredentials;
  readonly shopId: string;
}

/** Many shops behind one server, as a marketplace serves many sellers. */
export interface Fleet {
  readonly baseUrl: string;
  readonly shops: readonly FleetShop[];
  /** Mutates shop `index` (1-based). */
  mutate(index: number, m: Mutation): MutationTruth;
  /** Merged into every shop's faults. */
  setFaults(f: FaultsUpdate): void;
  /** Shop `index`'s churn changes after `since`. */
  churnLog(index: number, since: number): ChurnChange[];
  /** Every shop's counters, summed, and the server's connections. */
  stats(): SimStats;
  prerender(signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

const SHOP_PATH = /^\/shops\/(\d+)(\/.*)?$/;

/**
 * Shop `index`'s login: the application's credentials are shared, the owner's are derived from the
 * index, so every shop needs its own password grant.
 */
export function fleetCredentials(app: Partial<SimCredentials> | undefined, index: number): SimCredentials {
  const { clientId, clientSecret } = resolveOptions({ credentials: app ?? {} }).credentials;
  return { clientId, clientSecret, username: `shop-${index}-owner`, password: `shop-${index}-password` };
}

function addCounts<K extends string>(into: Record<K, number>, from: Readonly<Record<K, number>>): void {
  for (const key of Object.keys(from) as K[]) into[key] += from[key];
}

function sumStats(all: readonly ShopStats[]): ShopStats {
  const [first, ...rest] = all.map((stats) => structuredClone(stats));
  if (!first) throw new RangeError('a fleet has at least one shop');
  for (const stats of rest) {
    first.requests += stats.requests;
    first.listingRequests += stats.listingRequests;
    first.itemRequests += stats.itemRequests;
    first.tokenRefusals += stats.tokenRefusals;
    addCounts(first.tokenRequests, stats.tokenRequests);
    addCounts(first.faultsInjected, stats.faultsInjected);
  }
  return first;
}

function notFound(res: ServerResponse, path: string): void {
  res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ error: 'not_found', message: `no shop at ${path}` }));
}

/**
 * Serves `shops` shops of `options.items` items each. Shop `i` has seed `options.seed + i`, shop id
 * `shop-<i>` and the login from `fleetCredentials`; its API lives under `/shops/<i>`.
 */
export async function startFleet(options: SimulatorOptions, shops: number): Promise<Fleet> {
  if (!Number.isInteger(shops) || shops < 1)
    throw new RangeError(`shops must be an integer >= 1, got ${shops}`);
  const base = resolveOptions(options);
  const markets = Array.from({ length: shops }, (_, i) => {
    const credentials = fleetCredentials(base.credentials, i + 1);
    const settings = resolveOptions({
      ...options,
      seed: base.seed + i + 1,
      shopId: `shop-${i + 1}`,
      credentials,
    });
    return { market: new Marketplace(settings), credentials, shopId: settings.shopId };
  });
  const handlers = markets.map(({ market }) => handler(market));
  const server = createServer({ keepAliveTimeout: 30_000 }, (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const match = SHOP_PATH.exec(url.split('?', 1)[0] as string);
    const serve = match ? handlers[Number(match[1]) - 1] : undefined;
    if (!match || !serve) return notFound(res, url);
    req.url = url.slice(`/shops/${match[1]}`.length) || '/';
    serve(req, res);
  });
  const connections = countConnections(server);
  const address = await listen(server, base.port, base.host);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = `http://${host}:${address.port}`;
  const fleetShops = markets.map(({ market, credentials, shopId }, i) => {
    const shopUrl = `${baseUrl}/shops/${i + 1}`;
    market.serveAt(shopUrl);
    return { index: i + 1, baseUrl: shopUrl, credentials, shopId };
  });
  const marketAt = (index: number): Marketplace => {
    const found = markets[index - 1];
    if (!Number.isInteger(index) || !found) throw new RangeError(`no shop ${index} in a fleet of ${shops}`);
    return found.market;
  };
  let closing: Promise<void> | undefined;
  return {
    baseUrl,
    shops: fleetShops,
    mutate: (index, m) => marketAt(index).mutate(m),
    setFaults: (f) => {
      for (const { market } of markets) market.setFaults(f);
    },
    stats: () => ({ ...sumStats(markets.map(({ market }) => market.stats())), ...connections() }),
    churnLog: (index, since) => marketAt(index).churnLog(since),
    prerender: async (signal) => {
      for (const { market } of markets) await market.prerender(signal);
    },
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
