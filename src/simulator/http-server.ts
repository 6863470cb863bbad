import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { BodyError, basicCredentials, readParams } from './body.js';
import { Marketplace, type Reply } from './marketplace.js';
import { resolveOptions } from './sim-settings.js';
import type { SimStats, Simulator, SimulatorOptions } from './types.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const ITEM_PREFIX = '/v1/items/';
const LISTING_PATH = '/v1/sell/shop/items';

function send(res: ServerResponse, reply: Reply): void {
  const payload = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
  res.writeHead(reply.status, {
    'content-type': JSON_TYPE,
    'content-length': payload.length,
    ...reply.headers,
  });
  if (reply.dripMs) {
    drip(res, payload, reply.dripMs);
    return;
  }
  if (!reply.cut) {
    res.end(payload);
    return;
  }
  // Headers promise the whole body; half of it arrives, then the connection dies.
  res.write(payload.subarray(0, payload.length >> 1), () => res.socket?.destroy());
}

/** Sends `payload` one byte every `ms`, until it is all sent or the client goes away. */
function drip(res: ServerResponse, payload: Buffer, ms: number): void {
  let sent = 0;
  const next = (): void => {
    if (res.destroyed) return;
    if (sent === payload.length) {
      res.end();
      return;
    }
    res.write(payload.subarray(sent, sent + 1));
    sent += 1;
    setTimeout(next, ms);
  };
  next();
}

function notFound(method: string, path: string): Reply {
  return {
    status: 404,
    body: JSON.stringify({ error: 'not_found', message: `no route for ${method} ${path}` }),
  };
}

async function tokenReply(market: Marketplace, req: IncomingMessage, query: URLSearchParams): Promise<Reply> {
  const basic = basicCredentials(req.headers.authorization);
  if (req.method === 'GET') {
    // The spec's guide describes the refresh as a GET; passwords never travel in a query string.
    const params = Object.fromEntries(query);
    if (params.grant_type !== 'refresh_token') {
      const description = 'GET is accepted for grant_type=refresh_token only; use POST';
      return {
        status: 400,
        body: JSON.stringify({ error: 'invalid_request', error_description: description }),
      };
    }
    return market.token({ ...basic, ...params });
  }
  try {
    return market.token({ ...basic, ...(await readParams(req)) });
  } catch (error) {
    if (!(error instanceof BodyError)) throw error;
    return {
      status: 400,
      body: JSON.stringify({ error: 'invalid_request', error_description: error.message }),
    };
  }
}

async function route(market: Marketplace, req: IncomingMessage): Promise<Reply> {
  const url = req.url ?? '/';
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  const query = new URLSearchParams(mark < 0 ? '' : url.slice(mark + 1));
  const method = req.method ?? 'GET';
  if (path === '/v1/oauth/token' || path === '/v1/oauth/token/') {
    if (method === 'POST' || method === 'GET') return tokenReply(market, req, query);
  } else if (method === 'GET' && path === LISTING_PATH) {
    return market.listing(req.headers.authorization, query);
  } else if (method === 'GET' && path.startsWith(ITEM_PREFIX)) {
    return market.item(req.headers.authorization, decodeURIComponent(path.slice(ITEM_PREFIX.length)));
  }
  return notFound(method, path);
}

function failure(error: unknown): Reply {
  if (error instanceof URIError) {
    return { status: 400, body: JSON.stringify({ error: 'bad_request', message: 'malformed URL encoding' }) };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, body: JSON.stringify({ error: 'simulator_failure', message }) };
}

export function handler(market: Marketplace) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    market.countRequest();
    const [path, query = ''] = (req.url ?? '/').split('?');
    if (req.method === 'GET' && path === LISTING_PATH) {
      const span = market.listingArrived(new URLSearchParams(query));
      res.once('close', () => market.listingAnswered(span, res.writableFinished));
    }
    const { latencyMs } = market.faults;
    const replied = (latencyMs > 0 ? sleep(latencyMs) : Promise.resolve()).then(() => route(market, req));
    replied.then(
      (reply) => send(res, reply),
      (error: unknown) => send(res, failure(error)),
    );
  };
}

export function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** The connections `server` accepted, and of those the ones still open, counted from now. */
export function countConnections(server: Server): () => Pick<SimStats, 'connections' | 'openConnections'> {
  let connections = 0;
  let openConnections = 0;
  server.on('connection', (socket: Socket) => {
    connections += 1;
    openConnections += 1;
    socket.once('close', () => {
      openConnections -= 1;
    });
  });
  return () => ({ connections, openConnections });
}

/** Builds the catalogue, listens, and returns the handle tests and the CLI drive it with. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const settings = resolveOptions(options);
  const market = new Marketplace(settings);
  const server = createServer({ keepAliveTimeout: 30_000 }, handler(market));
  const connections = countConnections(server);
  const address = await listen(server, settings.port, settings.host);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = `http://${host}:${address.port}`;
  market.serveAt(baseUrl);
  let closing: Promise<void> | undefined;
  return {
    baseUrl,
    credentials: { ...settings.credentials },
    shopId: settings.shopId,
    truth: () => market.truth(),
    mutate: (m) => market.mutate(m),
    setFaults: (f) => market.setFaults(f),
    stats: () => ({ ...market.stats(), ...connections() }),
    moves: () => market.moves(),
    churnLog: (since) => market.churnLog(since),
    churnNow: (positions, query) => market.churnNow(positions, query),
    listedIds: (query) => market.listedIds(query),
    issuedTokens: () => market.issuedTokens(),
    listingArrivals: () => market.listingArrivals(),
    prerender: (signal) => market.prerender(signal),
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
