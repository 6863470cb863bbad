import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Queue } from 'bullmq';
import type { Logger } from '../../src/log.js';
import { DASHBOARD_PATH, queueDashboard } from './dashboard.js';
import type { HealthCheck } from './health.js';
import type { OpsMetrics } from './metrics.js';

export interface OpsServerDeps {
  readonly health: HealthCheck;
  readonly metrics: OpsMetrics;
  readonly queue: Queue;
  readonly log: Logger;
}

export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Serves `/healthz`, `/metrics` and the read-only `/queues` dashboard on `port` (0: any free port). */
export async function startOpsServer(port: number, deps: OpsServerDeps): Promise<OpsServer> {
  const dashboard = queueDashboard(deps.queue);
  const server = createServer((request, response) => {
    route(request, response, deps, dashboard).catch((error: unknown) => {
      deps.log.error({ err: error, path: request.url }, 'ops request failed');
      if (!response.headersSent) send(response, 500, 'text/plain', 'internal error\n');
      else response.destroy();
    });
  });
  server.listen(port);
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, close: () => closeServer(server) };
}

async function route(
  request: IncomingMessage,
  response: ServerResponse,
  deps: OpsServerDeps,
  dashboard: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://ops').pathname;
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('allow', 'GET, HEAD');
    return send(response, 405, 'text/plain', 'read-only: only GET and HEAD\n');
  }
  if (path === '/healthz') {
    const report = await deps.health.report();
    return send(response, report.status === 'ok' ? 200 : 503, 'application/json', JSON.stringify(report));
  }
  if (path === '/metrics') {
    const ours = await deps.metrics.registry.metrics();
    const queue = await deps.queue.exportPrometheusMetrics();
    return send(response, 200, deps.metrics.registry.contentType, `${ours}\n${queue}\n`);
  }
  if (path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`)) return dashboard(request, response);
  send(response, 404, 'text/plain', 'not found: try /healthz, /metrics or /queues\n');
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
