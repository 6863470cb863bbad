import { createHash, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Queue } from 'bullmq';
import type { Logger } from '../../src/log.js';
import { capConnections } from './connection-cap.js';
import { DASHBOARD_PATH, type LazyRequestHandler, queueDashboard } from './dashboard.js';
import type { HealthCheck } from './health.js';
import type { OpsMetrics } from './metrics.js';

/** The login `/metrics` and `/queues` ask for; its password already read. */
export interface OpsCredentials {
  readonly username: string;
  readonly password: string;
}

export interface OpsServerDeps {
  /** The address to bind (loopback by default: see OPS_HOST). */
  readonly host: string;
  /** When set, everything but `/healthz` asks for it (HTTP Basic). */
  readonly login?: OpsCredentials;
  readonly health: HealthCheck;
  readonly metrics: OpsMetrics;
  readonly queues: readonly Queue[];
  readonly log: Logger;
}

export interface OpsServer {
  /** The address bound, as the OS reports it. */
  readonly address: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * What the ops port allows one client, so that nothing sent to it can cost a sync its file descriptors
 * or its event loop: so many open connections at once (a new one beyond takes the place of the oldest
 * that is not being answered: see `connection-cap.ts`), the request's headers within HEADERS_TIMEOUT_MS,
 * the whole request within REQUEST_TIMEOUT_MS, an idle connection for IDLE_TIMEOUT_MS. Prometheus and a
 * probe need one connection each; a browser a few.
 */
export const OPS_LIMITS = {
  maxConnections: 32,
  /** Held beyond `maxConnections` while they are new, until the event loop has read them (`connection-cap.ts`). */
  burstConnections: 64,
  headersTimeoutMs: 2_000,
  requestTimeoutMs: 10_000,
  idleTimeoutMs: 15_000,
  /** How often Node checks the two timeouts above (its default, 30 s, lets slow clients pile up). */
  checkEveryMs: 1_000,
  maxHeaderBytes: 8 * 1024,
} as const;

/** Serves `/healthz`, `/metrics` and the read-only `/queues` dashboard on `host`:`port` (0: any free port). */
export async function startOpsServer(port: number, deps: OpsServerDeps): Promise<OpsServer> {
  const dashboard = queueDashboard(deps.queues);
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    route(request, response, deps, dashboard).catch((error: unknown) => {
      deps.log.error({ err: error, path: request.url }, 'ops request failed');
      if (!response.headersSent) send(response, 500, 'text/plain', 'internal error\n');
      else response.destroy();
    });
  };
  const server = createServer(
    {
      headersTimeout: OPS_LIMITS.headersTimeoutMs,
      requestTimeout: OPS_LIMITS.requestTimeoutMs,
      keepAliveTimeout: OPS_LIMITS.idleTimeoutMs,
      connectionsCheckingInterval: OPS_LIMITS.checkEveryMs,
      maxHeaderSize: OPS_LIMITS.maxHeaderBytes,
    },
    handle,
  );
  capConnections(server, {
    max: OPS_LIMITS.maxConnections,
    burst: OPS_LIMITS.burstConnections,
  });
  server.setTimeout(OPS_LIMITS.idleTimeoutMs, (socket) => socket.destroy());
  // Answered like any request: one with a body is refused before the client is told to send it.
  server.on('checkContinue', handle);
  server.listen(port, deps.host);
  await once(server, 'listening');
  const bound = server.address() as AddressInfo;
  return { address: bound.address, port: bound.port, close: () => closeServer(server) };
}

async function route(
  request: IncomingMessage,
  response: ServerResponse,
  deps: OpsServerDeps,
  dashboard: LazyRequestHandler,
): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://ops').pathname;
  if (hasBody(request)) return refuseBody(response);
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('allow', 'GET, HEAD');
    return send(response, 405, 'text/plain', 'read-only: only GET and HEAD\n');
  }
  if (path === '/healthz') {
    const report = await deps.health.report();
    return send(response, report.status === 'ok' ? 200 : 503, 'application/json', JSON.stringify(report));
  }
  if (deps.login && !authorized(request, deps.login)) {
    response.setHeader('www-authenticate', 'Basic realm="shop-sync", charset="UTF-8"');
    return send(response, 401, 'text/plain', 'login required\n');
  }
  if (path === '/metrics') {
    const ours = await deps.metrics.registry.metrics();
    const queues = await Promise.all(deps.queues.map((queue) => queue.exportPrometheusMetrics()));
    return send(response, 200, deps.metrics.registry.contentType, `${ours}\n${mergeFamilies(queues)}\n`);
  }
  if (path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`)) return dashboard(request, response);
  send(response, 404, 'text/plain', 'not found: try /healthz, /metrics or /queues\n');
}

/**
 * BullMQ's exposition of several queues as one: each queue repeats the same metric families (with its
 * `queue` label), and Prometheus wants each family's HELP, TYPE and samples together, once.
 */
export function mergeFamilies(texts: readonly string[]): string {
  const families = new Map<string, { header: string[]; samples: string[] }>();
  for (const text of texts) {
    let current: { header: string[]; samples: string[] } | undefined;
    for (const line of text.split('\n')) {
      const comment = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (comment) {
        const name = comment[2] as string;
        const known = families.get(name);
        current = known ?? { header: [], samples: [] };
        if (!known) families.set(name, current);
        if (current.header.length < 2 && !current.header.includes(line)) current.header.push(line);
      } else if (line.trim() !== '') {
        const name = /^[^{\s]+/.exec(line)?.[0] ?? '';
        const family = current ?? families.get(name) ?? { header: [], samples: [] };
        if (!families.has(name) && !current) families.set(name, family);
        family.samples.push(line);
      }
    }
  }
  return [...families.values()].flatMap((family) => [...family.header, ...family.samples]).join('\n');
}

function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Answers 413 and closes the connection without reading the body: Node would otherwise read (and throw
 * away) the whole body to keep the connection alive, however large it is.
 */
function refuseBody(response: ServerResponse): void {
  response.shouldKeepAlive = false;
  response.writeHead(413, { 'content-type': 'text/plain', connection: 'close' });
  response.end('the ops port reads no request body\n', () => response.socket?.destroy());
}

/** HTTP Basic, compared in constant time (over digests, so that lengths do not show either). */
function authorized(request: IncomingMessage, login: OpsCredentials): boolean {
  const match = /^Basic +([A-Za-z0-9+/=]+)$/i.exec(request.headers.authorization ?? '');
  if (!match) return false;
  const given = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(`${login.username}:${login.password}`));
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  response.end(body);
}

async function closeServer(server: Server): Promise<void> {
  const closed = once(server, 'close');
  server.close();
  server.closeAllConnections();
  await closed;
}
