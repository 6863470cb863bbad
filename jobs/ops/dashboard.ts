import type { IncomingMessage, ServerResponse } from 'node:http';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';

/** Where the dashboard is served on the ops port. */
export const DASHBOARD_PATH = '/queues';

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Bull Board over the sync queue, read-only: the board hides every button that changes a job or the
 * queue, and its API refuses such calls. The ops server also lets only GET and HEAD through.
 */
export function queueDashboard(queue: Queue): RequestHandler {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: [new BullMQAdapter(queue, { readOnlyMode: true, allowRetries: false })],
    serverAdapter,
    options: { uiConfig: { boardTitle: 'shop-sync' } },
  });
  // An Express application: a plain (request, response) handler once the mount path is stripped.
  const app = serverAdapter.getRouter() as RequestHandler;
  return (request, response) => {
    request.url = (request.url ?? '/').slice(DASHBOARD_PATH.length) || '/';
    app(request, response);
  };
}
