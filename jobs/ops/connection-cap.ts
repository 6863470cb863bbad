import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionCap {
  /** Connections held once the new ones have been read. */
  readonly max: number;
  /** How many more may be held while they are new: what arrives in one burst (after the event loop was busy). */
  readonly burst: number;
}

/**
 * Holds the port's connections to `max` without locking out a probe. Refusing what arrives beyond the
 * cap (Node's `maxConnections`) lets slow clients that never finish their headers keep the port to
 * themselves, and a liveness probe then restarts a healthy worker. Instead the connections not being
 * answered (still sending their headers, or idle between requests) give way, oldest first, to new ones.
 * A new connection is read only after the whole burst it came in was accepted, so it cannot lose its
 * place until the event loop has read it once: up to `burst` new ones are held beyond `max` meanwhile,
 * and one beyond that is closed. A client that sends its request at once is served.
 */
export function capConnections(server: Server, cap: ConnectionCap): void {
  const fresh = new Set<Socket>();
  // Oldest first, by when each was read or last answered: a Set keeps insertion order.
  const waiting = new Set<Socket>();
  const answering = new Set<Socket>();
  const held = () => fresh.size + waiting.size + answering.size;
  const evictOldest = (): boolean => {
    const oldest = waiting.values().next();
    if (oldest.done) return false;
    waiting.delete(oldest.value);
    oldest.value.destroy();
    return true;
  };
  const trim = () => {
    while (held() > cap.max && evictOldest());
  };
  server.on('connection', (socket: Socket) => {
    if (held() >= cap.max + cap.burst && !evictOldest()) return void socket.destroy();
    fresh.add(socket);
    socket.once('close', () => {
      fresh.delete(socket);
      waiting.delete(socket);
      answering.delete(socket);
    });
    // Two turns of the loop: the first ends the burst being accepted, the second reads what the socket sent.
    setImmediate(() =>
      setImmediate(() => {
        if (!fresh.delete(socket) || socket.destroyed) return;
        waiting.add(socket);
        trim();
      }),
    );
  });
  server.on('request', (request, response) => {
    const socket = request.socket;
    if (!fresh.delete(socket) && !waiting.delete(socket)) return;
    answering.add(socket);
    response.once('close', () => {
      if (!answering.delete(socket) || socket.destroyed) return;
      waiting.add(socket);
      trim();
    });
  });
}
