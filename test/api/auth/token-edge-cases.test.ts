import { describe, expect, it } from 'vitest';
import type { MarketplaceClient } from '../../../src/api/client.js';
import { CredentialsError, ProtocolError } from '../../../src/errors.js';
import { closedAfterEach } from '../helpers.js';
import {
  issuedToken as issued,
  type ScriptedAnswer,
  type ScriptedServer,
  scriptedClient,
  startScripted,
} from '../scripted-server.js';

/**
 * Token endpoint behaviours the simulator does not produce, served by a scripted server: `token`
 * answers the n-th token request, `listing` every listing request by its authorization. `grants` are the
 * grant types asked for, in order.
 */
interface Scripted {
  readonly baseUrl: string;
  readonly grants: string[];
  readonly listingAuthorizations: string[];
}

const live = closedAfterEach<ScriptedServer>();

async function scripted(
  token: (grant: string, n: number) => ScriptedAnswer,
  listing: (authorization: string) => ScriptedAnswer = () => ({ status: 200, body: '[]' }),
): Promise<Scripted> {
  let tokens = 0;
  const server = await startScripted((request) => {
    if (request.url.pathname !== '/v1/oauth/token') return listing(request.authorization);
    tokens += 1;
    return token(new URLSearchParams(request.body).get('grant_type') ?? '', tokens);
  });
  live.server = server;
  return {
    baseUrl: server.baseUrl,
    get grants() {
      return server.grants();
    },
    get listingAuthorizations() {
      return server.requests
        .filter((request) => request.url.pathname === '/v1/sell/shop/items')
        .map((request) => request.authorization);
    },
  };
}

function connect(baseUrl: string): MarketplaceClient {
  live.client = scriptedClient(baseUrl);
  return live.client;
}

async function drain(c: MarketplaceClient): Promise<number> {
  let pages = 0;
  for await (const _page of c.readItems({ maxInFlight: 1 })) pages += 1;
  return pages;
}

describe('token edge cases', () => {
  it('uses a token without expires_in until it is refused', async () => {
    const s = await scripted((_grant, n) => issued(n));
    const c = connect(s.baseUrl);
    await drain(c);
    await drain(c);
    expect(s.grants).toEqual(['password']);
    // Each reading asks for its empty first page twice and page 2 twice (the end is confirmed before it
    // is believed, each empty page counted only once asked twice), and page 0 once (page 1 is proved to
    // start the listing).
    expect(s.listingAuthorizations).toEqual(Array(10).fill('Bearer access-1'));
  });

  it.each([null, 0, -60, 'soon', '', true, {}])(
    'treats expires_in %j as an unknown lifetime, whatever the case of token_type',
    async (expiresIn) => {
      const s = await scripted((_grant, n) => issued(n, { expires_in: expiresIn, token_type: 'BEARER' }));
      const c = connect(s.baseUrl);
      await drain(c);
      await drain(c);
      expect(s.grants).toEqual(['password']);
      // Each reading asks for its empty first page twice, page 2 twice, and page 0 once.
      expect(s.listingAuthorizations).toEqual(Array(10).fill('Bearer access-1'));
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
