import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { connect, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OPS_LIMITS } from '../../../jobs/ops/ops-server.js';
import { enqueueSync, groupOf, type ShopJobData, syncQueueName } from '../../../jobs/queue.js';
import { startWorker, type WorkerHandle } from '../../../jobs/start-worker.js';
import { type AppConfig, loadConfig } from '../../../src/config/app-config.js';
import { ConfigError } from '../../../src/errors.js';
import { createLogger, silentLogger } from '../../../src/log.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import type { SyncSummary } from '../../../src/sync/index.js';
import { killAll, startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.js';
import { simEnv, tempDir } from '../../store/fixtures.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../redis-fixtures.js';
import { freePort } from './ops-fixtures.js';

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let prefix: string;
let redis: Redis;
let queue: Queue<ShopJobData, SyncSummary>;
let events: QueueEvents;
let worker: WorkerHandle | undefined;
const processes: WorkerProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ items: 300, seed: 23 });
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis.quit();
  await sim.close();
});
beforeEach(async () => {
  temp = tempDir('shop-sync-ops-safety-');
  prefix = uniquePrefix('ops-safety');
  queue = new Queue(syncQueueName(groupOf(['shop'])), { connection: redis, prefix });
  events = new QueueEvents(syncQueueName(groupOf(['shop'])), { connection: redis, prefix });
  await events.waitUntilReady();
});
afterEach(async () => {
  await worker?.close();
  worker = undefined;
  await killAll(processes);
  await events.close();
  await queue.close();
  await deletePrefix(prefix);
  temp.cleanup();
});

function env(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...simEnv(sim, temp.dir),
    REDIS_URL: TEST_REDIS_URL,
    SYNC_QUEUE_PREFIX: prefix,
    SYNC_PER_PAGE: '20',
    OPS_PORT: String(port),
    ...extra,
  };
}

/**
 * Bounds a probe so that a test ends: not a speed figure. On a loaded machine a flooded worker may take
 * seconds to answer; what a probe must never get is the connection closed on it.
 */
const PROBE_BOUND_MS = 15_000;

/**
 * GET /healthz as kubelet probes: on a connection of its own, closed after the answer. A kept-alive
 * connection sits idle between probes, and a flood's new connection may take its place (the oldest goes):
 * fetch's pool then sent the next probe on a connection the worker had just closed.
 */
function probeHealth(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpGet(
      { host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: PROBE_BOUND_MS },
      (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${PROBE_BOUND_MS} ms`)));
    request.on('error', reject);
  });
}

const config = (port: number, extra: Record<string, string> = {}): AppConfig => loadConfig(env(port, extra));

/** A non-loopback IPv4 address of this machine, if it has one. */
function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a?.family === 'IPv4' && !a.internal)?.address;
}

/** Whether a TCP connection to host:port is accepted. */
async function reachable(host: string, port: number): Promise<boolean> {
  const socket = connect(port, host);
  try {
    await once(socket, 'connect');
    return true;
  } catch {
    // ECONNREFUSED (or unreachable) is the answer asked for.
    return false;
  } finally {
    socket.destroy();
  }
}

function basic(user: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

describe('the ops port, safe by default', () => {
  it('binds loopback unless OPS_HOST says otherwise', async () => {
    expect(loadConfig({}).opsHost).toBe('127.0.0.1');
    expect(loadConfig({ OPS_HOST: '0.0.0.0' }).opsHost).toBe('0.0.0.0');
    expect(() => loadConfig({ OPS_HOST: 'not an address' })).toThrow(/OPS_HOST="not an address" is invalid/);
    const port = await freePort();
    const lines: string[] = [];
    worker = await startWorker(config(port), createLogger('info', { write: (l: string) => lines.push(l) }));
    expect(lines.find((l) => l.includes('ops port listening'))).toContain('"host":"127.0.0.1"');
    expect(await reachable('127.0.0.1', port)).toBe(true);
    const outside = outsideAddress();
    if (outside !== undefined) expect(await reachable(outside, port)).toBe(false);
    await worker.close();
    worker = undefined;
    if (outside !== undefined) {
      worker = await startWorker(config(port, { OPS_HOST: '0.0.0.0' }), silentLogger());
      expect(await reachable(outside, port)).toBe(true);
    }
  });

  it('asks for the login on /metrics and /queues, never on /healthz', async () => {
    const port = await freePort();
    const passwordFile = path.join(temp.dir, 'ops-password');
    writeFileSync(passwordFile, 'pr0m-scrape\n');
    worker = await startWorker(
      config(port, { OPS_USERNAME: 'prometheus', OPS_PASSWORD_FILE: passwordFile }),
      silentLogger(),
    );
    const at = (p: string, headers: Record<string, string> = {}) =>
      fetch(`http://127.0.0.1:${port}${p}`, { headers });
    for (const p of ['/metrics', '/queues', '/queues/api/queues']) {
      const anonymous = await at(p);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="shop-sync", charset="UTF-8"');
      expect((await at(p, basic('prometheus', 'wrong'))).status).toBe(401);
      expect((await at(p, basic('someone', 'pr0m-scrape'))).status).toBe(401);
      expect((await at(p, basic('prometheus', 'pr0m-scrape'))).status).toBe(200);
    }
    expect((await at('/healthz')).status).toBe(200);
    const metrics = await (await at('/metrics', basic('prometheus', 'pr0m-scrape'))).text();
    expect(metrics).not.toContain('pr0m-scrape');
  });

  it('refuses half a login, and a password file that cannot be read, before starting', async () => {
    expect(() => loadConfig({ OPS_USERNAME: 'prometheus' })).toThrow(ConfigError);
    expect(() => loadConfig({ OPS_PASSWORD: 'x' })).toThrow(/OPS_USERNAME is not set/);
    const missing = path.join(temp.dir, 'nope');
    await expect(
      startWorker(config(0, { OPS_USERNAME: 'p', OPS_PASSWORD_FILE: missing }), silentLogger()),
    ).rejects.toThrow(`OPS_PASSWORD_FILE names ${missing}, which cannot be read (ENOENT).`);
  });

  it('refuses a 1 GiB body without reading it, and closes the connection', async () => {
    const port = await freePort();
    worker = await startWorker(config(port), silentLogger());
    for (const target of ['/metrics', '/healthz']) {
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      let answer = '';
      socket.setEncoding('latin1').on('data', (chunk: string) => {
        answer += chunk;
      });
      socket.on('error', () => undefined);
      // Not events.once: it would reject on the EPIPE of a write after the server closed.
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write(`POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: ${2 ** 30}\r\n\r\n`);
      const chunk = Buffer.alloc(1 << 20, 0x61);
      let sent = 0;
      let open = true;
      void closed.then(() => {
        open = false;
      });
      // Keeps sending while the connection is open: a server reading the body would take it all.
      while (open && sent < 2 ** 30) {
        // A write after the server closed fails with EPIPE: the 'error' listener above takes it.
        if (!socket.write(chunk))
          await new Promise<void>((resolve) => {
            socket.once('drain', resolve);
            socket.once('close', () => resolve());
          });
        sent += chunk.length;
      }
      await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toContain('the ops port reads no request body');
      // What the kernel's buffers hold, at most: far from the gigabyte.
      expect(sent).toBeLessThan(64 * 2 ** 20);
    }
    // Told before sending, a client never sends the body at all.
    const waited = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(
          `PUT /queues HTTP/1.1\r\nHost: x\r\nContent-Length: ${2 ** 30}\r\nExpect: 100-continue\r\n\r\n`,
        ),
      );
      let answer = '';
      socket.setEncoding('latin1').on('data', (chunk: string) => {
        answer += chunk;
      });
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
    });
    expect(waited).toMatch(/^HTTP\/1\.1 413 /);
    expect(waited).not.toContain('100 Continue');
  });

  it('answers /healthz while more slow connections than its cap hold the port, and its sync completes', async () => {
    const port = await freePort();
    worker = await startWorker(config(port), silentLogger());
    const SLOW = OPS_LIMITS.maxConnections + 16;
    let flooding = true;
    let closedByWorker = 0;
    const sockets = new Set<Socket>();
    // Each sends the start of a request and then a byte a second, never finishing its headers; one the
    // worker closes comes back a moment later, so the port stays flooded for the whole test.
    const open = () => {
      if (!flooding) return;
      const socket = connect(port, '127.0.0.1');
      sockets.add(socket);
      let drip: NodeJS.Timeout | undefined;
      socket.on('connect', () => {
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
        drip = setInterval(() => socket.write('X'), 1_000);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(drip);
        sockets.delete(socket);
        if (flooding) closedByWorker += 1;
        setTimeout(open, 100);
      });
    };
    try {
      for (let i = 0; i < SLOW; i++) open();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { job } = await enqueueSync(queue, 'shop');
      for (let probe = 0; probe < 5; probe++) {
        const response = await probeHealth(port);
        expect(response.status).toBe(200);
        expect(JSON.parse(response.body)).toMatchObject({ status: 'ok' });
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      expect(await job.waitUntilFinished(events, 60_000)).toMatchObject({ status: 'complete', items: 300 });
      // The worker held no more than its cap: it closed the slow connections beyond it.
      expect(closedByWorker).toBeGreaterThanOrEqual(SLOW - OPS_LIMITS.maxConnections);
    } finally {
      flooding = false;
      for (const socket of sockets) socket.destroy();
    }
  }, 120_000);

  it('keeps syncing under more slow connections than the worker has file descriptors', async () => {
    const FD_LIMIT = 256;
    const CONNECTIONS = 400;
    const port = await freePort();
    const child = await startWorkerProcess(env(port), { fdLimit: FD_LIMIT });
    processes.push(child);
    let flooding = true;
    const sockets = new Set<Socket>();
    let refused = 0;
    // Each connection sends its headers a byte now and then, never finishing; one the worker closes
    // comes back half a second later, so that the flood lasts as long as the test.
    const open = () => {
      if (!flooding) return;
      const socket = connect(port, '127.0.0.1');
      sockets.add(socket);
      let drip: NodeJS.Timeout | undefined;
      socket.on('connect', () => {
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
        drip = setInterval(() => socket.write('X'), 1_000);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(drip);
        sockets.delete(socket);
        refused += 1;
        setTimeout(open, 500);
      });
    };
    for (let i = 0; i < CONNECTIONS; i++) open();
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const { job } = await enqueueSync(queue, 'shop');
      // Liveness probes are answered in the middle of the flood.
      for (let probe = 0; probe < 3; probe++) {
        expect((await probeHealth(port)).status).toBe(200);
      }
      const summary = await job.waitUntilFinished(events, 60_000);
      expect(summary).toMatchObject({ status: 'complete', items: 300 });
      // The worker closed what it would not serve: it held no more than its cap.
      expect(refused).toBeGreaterThanOrEqual(CONNECTIONS - OPS_LIMITS.maxConnections);
    } finally {
      flooding = false;
      for (const socket of sockets) socket.destroy();
    }
    expect(child.lines.join('\n')).not.toMatch(/EMFILE|unable to open database file/);
    // Once the flood is over, the port answers again.
    let status = 0;
    for (let tries = 0; tries < 50 && status !== 200; tries++) {
      status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe(200);
    expect(await child.stop()).toBe(0);
  }, 120_000);
});
