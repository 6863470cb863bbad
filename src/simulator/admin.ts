import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseJsonObject, readBody } from './body.js';
import { listen } from './http-server.js';
import type { ChurnChange, FaultsUpdate, Mutation, MutationTruth, SimStats, Simulator } from './types.js';

/** What the admin endpoint drives: a single simulator or a fleet. */
export interface AdminTarget {
  /** Mutates shop `index` (1-based; a single simulator is shop 1). */
  mutate(index: number, m: Mutation): MutationTruth;
  setFaults(f: FaultsUpdate): void;
  stats(): SimStats;
  /** Shop `index`'s churn changes after `since`. */
  churnLog(index: number, since: number): ChurnChange[];
}

export interface AdminServer {
  readonly url: string;
  close(): Promise<void>;
}

/** A single simulator as shop 1. */
export function singleShopAdmin(sim: Simulator): AdminTarget {
  return {
    mutate: (index, m) => {
      if (index !== 1) throw new RangeError(`no shop ${index}: this simulator serves one shop`);
      return sim.mutate(m);
    },
    setFaults: (f) => sim.setFaults(f),
    stats: () => sim.stats(),
    churnLog: (index, since) => {
      if (index !== 1) throw new RangeError(`no shop ${index}: this simulator serves one shop`);
      return sim.churnLog(since);
    },
  };
}

/** The request's body as a JSON object (none is `{}`). */
async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = (await readBody(req)).toString('utf8');
  return parseJsonObject(text === '' ? '{}' : text);
}

/** The 1-based shop a request names (`?shop=i`, default 1). */
function shopParam(url: URL): number {
  const shop = url.searchParams.get('shop') ?? '1';
  if (!/^[1-9][0-9]*$/.test(shop)) throw new RangeError(`shop must be an integer >= 1, got "${shop}"`);
  return Number(shop);
}

async function answer(
  target: AdminTarget,
  ready: () => boolean,
  req: IncomingMessage,
): Promise<[number, unknown]> {
  const url = new URL(req.url ?? '/', 'http://admin.invalid');
  const route = `${req.method} ${url.pathname}`;
  if (route === 'GET /ready') return ready() ? [200, { ready: true }] : [503, { ready: false }];
  if (route === 'GET /stats') return [200, target.stats()];
  if (route === 'POST /faults') {
    target.setFaults((await readJsonObject(req)) as FaultsUpdate);
    return [200, { ok: true }];
  }
  if (route === 'GET /churn') {
    const since = Number(url.searchParams.get('since') ?? '0');
    if (!Number.isInteger(since) || since < 0) throw new RangeError('since must be an integer >= 0');
    const changes = target.churnLog(shopParam(url), since);
    return [200, { changes, last: changes.at(-1)?.seq ?? since }];
  }
  if (route === 'POST /mutate') {
    const truth = target.mutate(shopParam(url), (await readJsonObject(req)) as Mutation);
    return [200, { added: truth.added.length, removed: truth.removed.length, updated: truth.updated.length }];
  }
  return [404, { error: 'not_found', message: `no admin route ${route}` }];
}

/**
 * The benchmark's control port, apart from the marketplace's own paths: mutate a shop between runs,
 * change faults (latency, churn), read the counters and what churn did (`GET /churn?shop=i&since=n`),
 * and ask whether the prerender has finished.
 */
export async function startAdmin(
  target: AdminTarget,
  ready: () => boolean,
  host: string,
  port: number,
): Promise<AdminServer> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    answer(target, ready, req).then(
      ([status, body]) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(body));
      },
      (error: unknown) => {
        res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' });
        res.end(
          JSON.stringify({
            error: 'bad_request',
            message: error instanceof Error ? error.message : String(error),
          }),
        );
      },
    );
  });
  const address = await listen(server, port, host);
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
