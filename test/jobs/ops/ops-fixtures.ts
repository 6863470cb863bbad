import { once } from 'node:events';
import { createServer } from 'node:net';

/** A port nobody listens on right now (the OS picks it; OPS_PORT=0 would turn the port off). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

/** One sample of a Prometheus text exposition, by metric name and exact label text; undefined if absent. */
export function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/**
 * The worker counts a job when BullMQ tells it, which may come just after a test's QueueEvents learn of
 * it: read /metrics until `ready` holds (or a few seconds pass), for the assertions that follow.
 */
export async function metricsOnce(port: number, ready: (text: string) => boolean): Promise<string> {
  let text = '';
  for (let tries = 0; tries < 50; tries++) {
    text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    if (ready(text)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return text;
}
