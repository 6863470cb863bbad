import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MarketplaceClient, type MarketplaceOptions } from '../../src/api/client.js';
import { TEST_RETRY } from './helpers.js';

/**
 * A marketplace whose every answer is set by the test, for server behaviours the simulator does not
 * produce. Each request is recorded; `grants` lists the grant types asked of the token endpoint.
 */
export interface ScriptedRequest {
  readonly method: string;
  readonly url: URL;
  readonly body: string;
  readonly authorization: string;
}

export interface ScriptedAnswer {
  readonly status: number;
  readonly body?: string;
  /** The body as these bytes, when it is not text (a compressed body). */
  readonly bytes?: Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sends the headers at once, then the body one byte every this many milliseconds. */
  readonly dripMs?: number;
}

export interface ScriptedServer {
  readonly baseUrl: string;
  readonly requests: ScriptedRequest[];
  grants(): string[];
  listingPages(): number[];
  close(): Promise<void>;
}

export const CREDENTIALS = {
  clientId: 'app',
  clientSecret: 'app-secret-value',
  username: 'owner',
  password: 'owner password/value',
} as const;

/** The environment of a CLI that syncs the shop `shop` from `baseUrl` into `dataDir`, quietly. */
export function scriptedShopEnv(baseUrl: string, dataDir: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    MARKETPLACE_BASE_URL: baseUrl,
    MARKETPLACE_CLIENT_ID: CREDENTIALS.clientId,
    MARKETPLACE_CLIENT_SECRET: CREDENTIALS.clientSecret,
    MARKETPLACE_USERNAME: CREDENTIALS.username,
    MARKETPLACE_PASSWORD: CREDENTIALS.password,
    SHOP_NAME: 'shop',
    LOG_LEVEL: 'silent',
  };
}

export async function startScripted(
  answer: (request: ScriptedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>,
): Promise<ScriptedServer> {
  const requests: ScriptedRequest[] = [];
  const drips = new Set<NodeJS.Timeout>();
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const request = {
      method: req.method ?? 'GET',
      url: new URL(req.url ?? '/', 'http://127.0.0.1'),
      body,
      authorization: req.headers.authorization ?? '',
    };
    requests.push(request);
    const reply = await answer(request);
    const headers = { 'content-type': 'application/json', ...reply.headers };
    if (reply.dripMs === undefined) {
      res.writeHead(reply.status, headers).end(reply.bytes ?? reply.body ?? '');
      return;
    }
    const bytes = Buffer.from(reply.body ?? '');
    res.writeHead(reply.status, { ...headers, 'content-length': String(bytes.length) }).flushHeaders();
    let sent = 0;
    const drip = setInterval(() => {
      if (res.destroyed || sent >= bytes.length) {
        clearInterval(drip);
        drips.delete(drip);
        if (!res.destroyed) res.end();
        return;
      }
      res.write(bytes.subarray(sent, sent + 1));
      sent += 1;
    }, reply.dripMs);
    drips.add(drip);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    grants: () =>
      requests
        .filter((r) => r.url.pathname === '/v1/oauth/token')
        .map((r) => new URLSearchParams(r.body).get('grant_type') ?? ''),
    listingPages: () =>
      requests
        .filter((r) => r.url.pathname === '/v1/sell/shop/items')
        .map((r) => Number(r.url.searchParams.get('page'))),
    close: async () => {
      for (const drip of drips) clearInterval(drip);
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export function scriptedClient(
  baseUrl: string,
  overrides: Partial<MarketplaceOptions> = {},
): MarketplaceClient {
  return new MarketplaceClient({ baseUrl, ...CREDENTIALS, retry: TEST_RETRY, ...overrides });
}

/** A token answer numbered `n`, with a refresh token unless `extra` says otherwise. */
export function issuedToken(n: number, extra: object = {}): ScriptedAnswer {
  return {
    status: 200,
    body: JSON.stringify({
      access_token: `access-${n}`,
      token_type: 'bearer',
      refresh_token: `refresh-${n}`,
      ...extra,
    }),
  };
}

/** A listing item as the spec's sample shows it, with `extra` fields replacing or adding to it. */
export function sampleItem(baseUrl: string, id: string, extra: object = {}): Record<string, unknown> {
  return {
    id,
    title: `Item ${id}`,
    url: `${baseUrl}/v1/items/${id}`,
    created_at: '2024-01-01T00:00:00Z',
    price: '10.5',
    original_price: null,
    photos: [],
    fbcomments: `${baseUrl}/fb/${id}`,
    quantity: 3,
    shop: {
      id: 'shop',
      url: `${baseUrl}/v1/shops/shop`,
      name: 'Shop',
      image: {},
      items_url: `${baseUrl}/v1/shops/shop/items`,
    },
    ...extra,
  };
}
