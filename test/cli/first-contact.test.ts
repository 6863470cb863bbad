import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { shopPaths } from '../../src/store/paths.js';
import { runCli } from '../helpers/cli.js';
import { simEnv, tempDir } from '../store/fixtures.js';

/** "A few seconds": the first-contact window (3 s) and a process start, far below the 120 s budget. */
const FEW_SECONDS_MS = 8_000;

let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let before: Buffer;
beforeAll(async () => {
  sim = await startSimulator({ items: 50, seed: 4 });
  temp = tempDir('shop-sync-first-contact-');
  // The default retry budget (120 s): a setting error must not spend it.
  env = simEnv(sim, temp.dir);
  expect((await runCli(['sync'], env)).code).toBe(0);
  before = readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv);
});
afterAll(async () => {
  await sim.close();
  temp.cleanup();
});

/** Runs `args` with `baseUrl` as MARKETPLACE_BASE_URL, timing it. */
async function runAt(baseUrl: string, args: string[]) {
  const started = Date.now();
  const result = await runCli(args, { ...env, MARKETPLACE_BASE_URL: baseUrl });
  return { ...result, ms: Date.now() - started };
}

async function expectDataIntact(): Promise<void> {
  const runs = JSON.parse((await runCli(['runs', '--json'], env)).stdout) as { status: string }[];
  expect(runs[0]?.status).toBe('complete');
  expect(runs.slice(1).every((r) => r.status === 'failed')).toBe(true);
  expect(Buffer.from((await runCli(['export'], env)).stdout)).toEqual(before);
  expect(readFileSync(shopPaths(temp.dir, 'shop').inventoryCsv)).toEqual(before);
}

describe('a first request that never reaches the marketplace', () => {
  it('a wrong port: sync and check fail within seconds as a setting error naming MARKETPLACE_BASE_URL', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    const sentence = new RegExp(
      `^MARKETPLACE_BASE_URL is http://127\\.0\\.0\\.1:${port}, but nothing accepts connections at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED, after \\d+ attempts? in [\\d.]+ s \\(budget 120 s\\)\\); check the host and port, and that the marketplace is running\\.$`,
    );
    const sync = await runAt(url, ['sync']);
    expect(sync.code).toBe(2);
    expect(sync.stderr.trimEnd()).toMatch(new RegExp(`^shop-sync: ${sentence.source.slice(1)}`));
    expect(sync.ms).toBeLessThan(FEW_SECONDS_MS);

    const check = await runAt(url, ['check', '--json']);
    expect(check.code).toBe(2);
    expect(JSON.parse(check.stdout)).toMatchObject({ shop: 'shop', ok: false, base_url: url });
    expect((JSON.parse(check.stdout) as { error: string }).error).toMatch(sentence);
    expect(check.ms).toBeLessThan(FEW_SECONDS_MS);
    await expectDataIntact();
  });

  it('a host name that does not resolve: fails within seconds naming the setting and the host', async () => {
    const sync = await runAt('https://shop-sync-test.invalid', ['sync']);
    expect(sync.code).toBe(2);
    expect(sync.stderr).toMatch(
      /^shop-sync: MARKETPLACE_BASE_URL is https:\/\/shop-sync-test\.invalid, but the host name shop-sync-test\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN|EAI_NONAME), after \d+ attempts? in [\d.]+ s \(budget 120 s\)\); check the host name\.\n$/,
    );
    expect(sync.ms).toBeLessThan(FEW_SECONDS_MS);
    await expectDataIntact();
  });

  it('https:// against a plain-HTTP server: never retried, says the server does not speak TLS', async () => {
    let connections = 0;
    const plain = createHttpServer((_req, res) => res.end('{}'));
    plain.on('connection', () => {
      connections += 1;
    });
    plain.listen(0, '127.0.0.1');
    await once(plain, 'listening');
    const { port } = plain.address() as AddressInfo;
    try {
      const url = `https://127.0.0.1:${port}`;
      const sentence = `MARKETPLACE_BASE_URL is ${url}, but the server at 127.0.0.1:${port} does not speak TLS (ERR_SSL_WRONG_VERSION_NUMBER); if it serves plain HTTP, the URL starts with http://.`;
      const sync = await runAt(url, ['sync']);
      expect(sync.code).toBe(2);
      expect(sync.stderr).toBe(`shop-sync: ${sentence}\n`);
      expect(sync.ms).toBeLessThan(FEW_SECONDS_MS);
      expect(connections).toBe(1);

      const check = await runAt(url, ['check']);
      expect(check.code).toBe(2);
      expect(check.stdout).toBe('');
      expect(check.stderr).toBe(`shop-sync: ${sentence}\n`);
      expect(connections).toBe(2);
      await expectDataIntact();
    } finally {
      plain.closeAllConnections();
      plain.close();
    }
  });
});

describe('http:// against an HTTPS server', () => {
  it('fails within seconds as a setting error saying the server speaks TLS, not retried as a dropped connection', async () => {
    let connections = 0;
    const secure = createHttpsServer(selfSignedCertificate(temp.dir), (_req, res) => res.end('{}'));
    secure.on('connection', () => {
      connections += 1;
    });
    secure.listen(0, '127.0.0.1');
    await once(secure, 'listening');
    const { port } = secure.address() as AddressInfo;
    try {
      const url = `http://127.0.0.1:${port}`;
      const sentence = `MARKETPLACE_BASE_URL is ${url}, but the server at 127.0.0.1:${port} speaks TLS (HTTPS); the URL starts with https://.`;
      const sync = await runAt(url, ['sync']);
      expect(sync.code).toBe(2);
      expect(sync.stderr).toBe(`shop-sync: ${sentence}\n`);
      expect(sync.ms).toBeLessThan(FEW_SECONDS_MS);
      // The request, then one TLS handshake to tell what the server is.
      expect(connections).toBe(2);

      const check = await runAt(url, ['check']);
      expect(check.code).toBe(2);
      expect(check.stdout).toBe('');
      expect(check.stderr).toBe(`shop-sync: ${sentence}\n`);
      await expectDataIntact();
    } finally {
      secure.closeAllConnections();
      secure.close();
    }
  });
});

describe('a 404 from the token endpoint', () => {
  it('says a base URL ending in /v1 has one /v1 too many, and what to set instead', async () => {
    const sync = await runAt(`${sim.baseUrl}/v1`, ['sync']);
    expect(sync.code).toBe(2);
    expect(sync.stderr).toMatch(
      /^shop-sync: POST \/v1\/oauth\/token \(grant password\) answered HTTP 404 \(.*\): there is no token endpoint there; MARKETPLACE_BASE_URL ends in \/v1, which shop-sync adds itself: set it to http:\/\/127\.0\.0\.1:\d+\.\n$/,
    );
    expect(sync.stderr).toContain(`set it to ${sim.baseUrl}.`);
    const check = await runAt(`${sim.baseUrl}/v1/`, ['check']);
    expect(check.code).toBe(2);
    expect(check.stdout).toBe('');
    expect(check.stderr).toContain(`set it to ${sim.baseUrl}.`);
    await expectDataIntact();
  });

  it('says a base URL with another path is probably not where the API is', async () => {
    const sync = await runAt(`${sim.baseUrl}/api`, ['sync']);
    expect(sync.code).toBe(2);
    expect(sync.stderr).toContain(
      `there is no token endpoint there; MARKETPLACE_BASE_URL has the path /api; the marketplace's API is usually at the root of its host (${sim.baseUrl}).`,
    );
    await expectDataIntact();
  });
});

/** A port on 127.0.0.1 with nothing listening: bound once by the OS, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

/** A key and a self-signed certificate for 127.0.0.1, made by openssl in `dir`. */
function selfSignedCertificate(dir: string): { key: Buffer; cert: Buffer } {
  const key = join(dir, 'tls-key.pem');
  const cert = join(dir, 'tls-cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key), cert: readFileSync(cert) };
}
