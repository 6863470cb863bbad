import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../../src/api/http/http-client.js';
import { TransientError } from '../../../src/api/http/retry.js';
import { isLoopback, validateBaseUrl } from '../../../src/config/base-url.js';
import { type ApiError, ConfigError } from '../../../src/errors.js';

const servers: Server[] = [];
const clients: HttpClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function serve(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function client(
  baseUrl: string,
  options: Partial<ConstructorParameters<typeof HttpClient>[0]> = {},
): HttpClient {
  const http = new HttpClient({ baseUrl, ...options });
  clients.push(http);
  return http;
}

describe('validateBaseUrl', () => {
  it.each([
    'https://api.example.com',
    'http://127.0.0.1:4010',
    'http://127.9.9.9',
    'http://localhost:8080',
    'http://[::1]:4010',
  ])('accepts %s', (url) => {
    expect(validateBaseUrl(url).href.startsWith(url.replace(/\/$/, ''))).toBe(true);
  });

  it('refuses clear text to another host unless allowed', () => {
    expect(() => validateBaseUrl('http://10.0.0.5:4010')).toThrow(
      new ConfigError(
        'MARKETPLACE_BASE_URL',
        'MARKETPLACE_BASE_URL must use https: (got http://10.0.0.5:4010); set MARKETPLACE_ALLOW_INSECURE=1 to allow clear text',
      ),
    );
    expect(validateBaseUrl('http://10.0.0.5:4010', true).host).toBe('10.0.0.5:4010');
  });

  it('refuses other schemes, credentials in the URL and garbage, naming the setting', () => {
    for (const url of ['ftp://api.example.com', 'https://user:pw@api.example.com', 'not a url']) {
      let error: unknown;
      try {
        validateBaseUrl(url);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).setting).toBe('MARKETPLACE_BASE_URL');
      expect((error as Error).message).not.toContain(':pw@');
    }
  });

  it('knows loopback hosts from look-alikes', () => {
    expect(['127.0.0.1', '127.1.2.3', 'localhost', '[::1]', 'api.localhost'].every(isLoopback)).toBe(true);
    expect(['128.0.0.1', 'localhost.example.com', '127.example.com', '::2'].some(isLoopback)).toBe(false);
  });
});

describe('HttpClient', () => {
  it('keeps a base path and answers every status', async () => {
    const base = await serve((req, res) => {
      res.statusCode = req.url === '/api/v1/x' ? 418 : 500;
      res.end('teapot');
    });
    const response = await client(`${base}/api/`).request({ method: 'GET', path: '/v1/x' });
    expect(response).toMatchObject({ status: 418, body: 'teapot' });
  });

  it('does not follow a redirect, so the token never reaches the other host', async () => {
    let reached = 0;
    const elsewhere = await serve((_req, res) => {
      reached += 1;
      res.end('[]');
    });
    const base = await serve((_req, res) => {
      res.writeHead(302, { location: `${elsewhere}/v1/sell/shop/items?access_token=abc123` }).end();
    });
    const failure = client(base).request({
      method: 'GET',
      path: '/v1/sell/shop/items',
      headers: { authorization: 'Bearer t0k3n' },
    });
    await expect(failure).rejects.toThrow(
      `GET /v1/sell/shop/items was redirected (HTTP 302) to ${elsewhere}/v1/sell/shop/items?access_token=[redacted]; redirects are not followed so that credentials stay with MARKETPLACE_BASE_URL`,
    );
    await failure.catch((error: ApiError) => expect(error.retryable).toBe(false));
    expect(reached).toBe(0);
  });

  it.each([
    ['/v2/items?access_token=abc123', '/v2/items?access_token=[redacted]'],
    ['items2?page=2', '/api/v1/sell/shop/items2?page=2'],
    ['../other', '/api/v1/sell/other'],
  ])('shows a relative redirect to %s resolved against the request URL', async (location, shownPath) => {
    const base = await serve((_req, res) => res.writeHead(301, { location }).end());
    const failure = client(`${base}/api/`).request({ method: 'GET', path: '/v1/sell/shop/items?page=1' });
    await expect(failure).rejects.toThrow(
      `GET /v1/sell/shop/items?page=1 was redirected (HTTP 301) to ${base}${shownPath}; redirects are not followed`,
    );
  });

  it('refuses a response larger than the cap, without retrying', async () => {
    const base = await serve((_req, res) => res.end('x'.repeat(200_000)));
    const failure = client(base, { maxResponseBytes: 100_000 }).request({ method: 'GET', path: '/big' });
    await expect(failure).rejects.toThrow('GET /big failed: the response exceeded 100000 bytes');
    await failure.catch((error: ApiError) => {
      expect(error).not.toBeInstanceOf(TransientError);
      expect(error.retryable).toBe(false);
    });
  });

  it('turns a silent server into a retryable timeout', async () => {
    const base = await serve(() => undefined);
    const failure = client(base, { timeouts: { headersMs: 100 } }).request({ method: 'GET', path: '/slow' });
    await expect(failure).rejects.toThrow(
      'GET /slow failed: timed out waiting for the response (UND_ERR_HEADERS_TIMEOUT)',
    );
    await failure.catch((error: ApiError) => expect(error).toBeInstanceOf(TransientError));
  });

  it('turns a connection dropped mid-body into a retryable error', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('[{"id":"1"');
      setImmediate(() => res.socket?.destroy());
    });
    const failure = client(base).request({ method: 'GET', path: '/drop' });
    await expect(failure).rejects.toThrow(
      /^GET \/drop failed: the connection dropped before the response was complete/,
    );
    await failure.catch((error: ApiError) => expect(error).toBeInstanceOf(TransientError));
  });

  it('finds the path of a URL below the base URL and nothing else', async () => {
    const http = client('https://api.example.com/market');
    expect(http.pathWithin('https://api.example.com/market/v1/items/7?x=1')).toBe('/v1/items/7?x=1');
    expect(http.pathWithin('https://api.example.com/marketplace/v1/items/7')).toBeUndefined();
    expect(http.pathWithin('https://api.example.com:8443/market/v1/items/7')).toBeUndefined();
    expect(http.pathWithin('http://api.example.com/market/v1/items/7')).toBeUndefined();
    expect(http.pathWithin('https://u:p@api.example.com/market/v1/items/7')).toBeUndefined();
  });
});
