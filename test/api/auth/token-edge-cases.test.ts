import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MarketplaceClient } from '../../../src/api/client.js';
import { CredentialsError, ProtocolError } from '../../../src/errors.js';
import { TEST_RETRY } from '../helpers.js';

/**
 * Token endpoint behaviours the simulator does not produce, served by a minimal server whose every answer
 * is set by the test. `grants` records the grant types asked for, in order.
 */
interface Scripted {
  readonly baseUrl: string;
  readonly grants: string[];
  readonly listingAuthorizations: string[];
}

let server: Server | undefined;
let client: MarketplaceClient | undefined;

afterEach(async () => {
  await client?.close();
  server?.closeAllConnections();
  server?.close();
  client = undefined;
  server = undefined;
});

async function scripted(
  token: (grant: string, n: number) => { status: number; body: string },
  listing: (authorization: string) => { status: number; body: string } = () => ({ status: 200, body: '[]' }),
): Promise<Scripted> {
  const grants: string[] = [];
  const listingAuthorizations: string[] = [];
  const tokenAnswer = (body: string) => {
    const grant = new URLSearchParams(body).get('grant_type') ?? '';
    return token(grant, grants.push(grant));
  };
  const listingAnswer = (req: IncomingMessage) => {
    const authorization = req.headers.authorization ?? '';
    listingAuthorizations.push(authorization);
    return listing(authorization);
  };
  server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const answer = req.url?.startsWith('/v1/oauth/token') ? tokenAnswer(body) : listingAnswer(req);
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { baseUrl, grants, listingAuthorizations };
}

function connect(baseUrl: string): MarketplaceClient {
  client = new MarketplaceClient({
    baseUrl,
    clientId: 'app',
    clientSecret: 'app-secret-value',
    username: 'owner',
    password: 'owner-password-value',
    retry: TEST_RETRY,
  });
  return client;
}

async function drain(c: MarketplaceClient): Promise<number> {
  let pages = 0;
  for await (const _page of c.readItems({ maxInFlight: 1 })) pages += 1;
  return pages;
}

const issued = (n: number, extra: object = {}) => ({
  status: 200,
  body: JSON.stringify({
    access_token: `access-${n}`,
    token_type: 'bearer',
    refresh_token: `refresh-${n}`,
    ...extra,
  }),
});

describe('token edge cases', () => {
  it('uses a token without expires_in until it is refused', async () => {
    const s = await scripted((_grant, n) => issued(n));
    const c = connect(s.baseUrl);
    await drain(c);
    await drain(c);
    expect(s.grants).toEqual(['password']);
    // Each reading asks for its empty first page twice: the end is confirmed before it is believed.
    expect(s.listingAuthorizations).toEqual(Array(4).fill('Bearer access-1'));
  });

  it.each([null, 0, -60, 'soon', '', true, {}])(
    'treats expires_in %j as an unknown lifetime, whatever the case of token_type',
    async (expiresIn) => {
      const s = await scripted((_grant, n) => issued(n, { expires_in: expiresIn, token_type: 'BEARER' }));
      const c = connect(s.baseUrl);
      await drain(c);
      await drain(c);
      expect(s.grants).toEqual(['password']);
      // Each reading asks for its empty first page twice: the end is confirmed before it is believed.
      expect(s.listingAuthorizations).toEqual(Array(4).fill('Bearer access-1'));
    },
  );

  it('retries a token endpoint that fails with 503', async () => {
    const s = await scripted((_grant, n) => (n < 3 ? { status: 503, body: '{"error":"busy"}' } : issued(n)));
    await drain(connect(s.baseUrl));
    expect(s.grants).toEqual(['password', 'password', 'password']);
  });

  it('fails with a CredentialsError when even a fresh password-grant token is refused', async () => {
    const s = await scripted(
      (_grant, n) => issued(n, { expires_in: 3600 }),
      () => ({ status: 401, body: '{"error":"unauthorized"}' }),
    );
    const failure = drain(connect(s.baseUrl));
    await expect(failure).rejects.toThrow(CredentialsError);
    await expect(failure).rejects.toThrow(
      'GET /v1/sell/shop/items?page=1&per_page=100 was refused with HTTP 401 even with a token freshly issued for the shop owner (MARKETPLACE_USERNAME).',
    );
    expect(s.grants).toEqual(['password', 'refresh_token', 'password']);
    expect(s.listingAuthorizations).toEqual(['Bearer access-1', 'Bearer access-2', 'Bearer access-3']);
  });

  it('reports a password grant refused for another reason with the server message, without secrets', async () => {
    const s = await scripted(() => ({
      status: 400,
      body: '{"error":"unsupported_grant_type","error_description":"no password grant for app-secret-value"}',
    }));
    const failure = drain(connect(s.baseUrl));
    await expect(failure).rejects.toThrow(
      'The marketplace refused the password grant with HTTP 400: unsupported_grant_type: no password grant for [redacted]',
    );
  });

  it('fails with a ProtocolError when the token endpoint answers something that is not a token', async () => {
    const s = await scripted(() => ({ status: 200, body: '{"token":"x"}' }));
    await expect(drain(connect(s.baseUrl))).rejects.toThrow(
      new ProtocolError(
        'POST /v1/oauth/token (grant password) answered HTTP 200 without a usable access_token',
      ),
    );
  });
});
