import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly at: number;
}

/** What the receiver answers: a status (and a Location for a redirect). */
export type Answer = { status: number; location?: string };

/**
 * A webhook receiver as a consumer would run one: a real HTTP server on a port that stays the same when
 * it goes away (`stop`) and comes back (`start`). `answer` decides each response from the requests so far.
 */
export class Receiver {
  readonly received: Received[] = [];
  answer: (request: Received, count: number) => Answer = () => ({ status: 200 });
  private server: Server | undefined;
  port = 0;

  async start(): Promise<this> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received = {
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        this.received.push(received);
        const { status, location } = this.answer(received, this.received.length);
        response.writeHead(status, location ? { location } : {});
        response.end(status < 300 ? 'thanks\n' : 'not now\n');
      });
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Goes away: new connections are refused until `start`. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const closed = once(server, 'close');
    server.close();
    server.closeAllConnections();
    await closed;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks/shop-sync`;
  }
}

/** The receiver's side of the signature check, as the README shows it. */
export function validSignature(received: Received, secret: string): boolean {
  const expected = `sha256=${createHmac('sha256', secret).update(received.body).digest('hex')}`;
  const given = String(received.headers['x-shop-sync-signature'] ?? '');
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}
