import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Queue } from 'bullmq';

/** Where the dashboard is served on the ops port. */
export const DASHBOARD_PATH = '/queues';

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** Answers a request, once the handler it needs is loaded; a failure to load it is the request's. */
export type LazyRequestHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

/**
 * Bull Board over the worker's queues (each shop's syncs, and the scheduler ticks), read-only: the
 * board hides every button that changes a job or a queue, and its API refuses such calls. The ops
 * server also lets only GET and HEAD through. Bull Board and Express are loaded at the first request
 * for the board, not at start-up: most workers are never asked for it, and loading them cost every
 * worker about 0.4 s of CPU before it took jobs and MiBs of resident memory for as long as it ran.
 */
export function queueDashboard(queues: readonly Queue[]): LazyRequestHandler {
  let board: Promise<RequestHandler> | undefined;
  return async (request, response) => {
    board ??= boardOf(queues);
    const app = await board.catch((error: unknown) => {
      board = undefined;
      throw error;
    });
    request.url = (request.url ?? '/').slice(DASHBOARD_PATH.length) || '/';
    app(request, response);
  };
}

async function boardOf(queues: readonly Queue[]): Promise<RequestHandler> {
  const [{ createBullBoard }, { BullMQAdapter }, { ExpressAdapter }] = await Promise.all([
    import('@bull-board/api'),
    import('@bull-board/api/bullMQAdapter'),
    import('@bull-board/express'),
  ]);
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: true, allowRetries: false })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'shop-sync' } },
  });
  // An Express application: a plain (request, response) handler once the mount path is stripped.
  return serverAdapter.getRouter() as RequestHandler;
}
