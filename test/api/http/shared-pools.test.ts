import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient, type HttpOptions } from '../../../src/api/http/http-client.js';
import { type PoolSettings, SharedPools } from '../../../src/api/http/shared-pools.js';
import { InterruptedError, ResponseTooLargeError } from '../../../src/errors.js';

/** A server that counts the connections it accepts and keeps those still open. */
interface CountingServer {
  readonly baseUrl: string;
  readonly accepted: number;
  readonly open: Set<Socket>;
}

const servers: Server[] = [];
const clients: HttpClient[] = [];
const shared: SharedPools[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(shared.splice(0).map((pools) => pools.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function serve(listener: (req: IncomingMessage, res: ServerResponse) => void): Promise<CountingServer> {
  const server = createServer({ keepAliveTimeout: 30_000 }, listener);
  servers.push(server);
  const counting = { baseUrl: '', accepted: 0, open: new Set<Socket>() };
  server.on('connection', (socket: Socket) => {
    counting.accepted += 1;
    counting.open.add(socket);
    socket.once('close', () => counting.open.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  counting.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return counting;
}

function pools(syncs = 1): SharedPools {
  const made = new SharedPools(syncs);
  shared.push(made);
  return made;
}

function client(options: HttpOptions): HttpClient {
  const made = new HttpClient(options);
  clients.push(made);
  return made;
}

const get = (http: HttpClient, path: string) => http.request({ method: 'GET', path });

describe('SharedPools', () => {
  const settings: PoolSettings = {
    connectMs: 10_000,
    headersMs: 30_000,
    bodyMs: 30_000,
    maxResponseBytes: 1_000,
    connections: 3,
  };

  it('hands out one pool per origin and settings', () => {
    const all = pools();
    const origin = 'http://127.0.0.1:4010';
    const pool = all.borrow(origin, settings);
    expect(all.borrow(origin, { ...settings })).toBe(pool);
    const others = [
      all.borrow('http://127.0.0.1:4011', settings),
      all.borrow(origin, { ...settings, connectMs: 5_000 }),
      all.borrow(origin, { ...settings, headersMs: 5_000 }),
      all.borrow(origin, { ...settings, bodyMs: 5_000 }),
      all.borrow(origin, { ...settings, maxResponseBytes: 2_000 }),
      all.borrow(origin, { ...settings, connections: 9 }),
    ];
    expect(new Set([pool, ...others]).size).toBe(7);
  });

  it('lends its connections to every client of one origin, and closes them once', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const all = pools();
    for (let i = 0; i < 3; i += 1) {
      const http = client({ baseUrl: server.baseUrl, connections: 1, pools: all });
      expect(await get(http, '/v1/x')).toMatchObject({ status: 200, body: 'ok' });
      await http.close();
    }
    // Each client closed, their socket still open for the next.
    expect(server.accepted).toBe(1);
    expect(server.open.size).toBe(1);

    await all.close();
    await Promise.all([...server.open].map((socket) => once(socket, 'close')));
    expect(server.open.size).toBe(0);
    expect(() => all.borrow(server.baseUrl, settings)).toThrow(InterruptedError);
  });

  it('gives a client with another response cap a pool of its own', async () => {
    const server = await serve((_req, res) => res.end('x'.repeat(500)));
    const all = pools();
    const capped = client({ baseUrl: server.baseUrl, maxResponseBytes: 100, pools: all });
    const roomy = client({ baseUrl: server.baseUrl, pools: all });
    await expect(get(capped, '/big')).rejects.toBeInstanceOf(ResponseTooLargeError);
    expect((await get(roomy, '/big')).body).toHaveLength(500);
    await expect(get(capped, '/big')).rejects.toBeInstanceOf(ResponseTooLargeError);
  });

  it('takes back the connection of a request whose client was closed, for the next client', async () => {
    let arrive: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => {
      arrive = resolve;
    });
    // /hang is never answered.
    const server = await serve((req, res) => (req.url === '/hang' ? arrive() : res.end('ok')));
    // One connection in all: the next client is answered only if the hanging request gave it back.
    const all = pools();
    const first = client({ baseUrl: server.baseUrl, connections: 1, pools: all });
    const hanging = get(first, '/hang');
    hanging.catch(() => undefined);
    await arrived;

    await first.close();
    await expect(hanging).rejects.toThrow(
      new InterruptedError('GET /hang was stopped: its marketplace client was closed.'),
    );
    await expect(get(first, '/v1/x')).rejects.toThrow(
      new InterruptedError('GET /v1/x was not sent: its marketplace client was closed.'),
    );
    const next = client({ baseUrl: server.baseUrl, connections: 1, pools: all });
    expect(await get(next, '/v1/x')).toMatchObject({ status: 200, body: 'ok' });
  });
});
