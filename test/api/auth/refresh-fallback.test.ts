import { describe, expect, it } from 'vitest';
import { CredentialsError } from '../../../src/errors.js';
import { closedAfterEach, readAll } from '../helpers.js';
import {
  issuedToken,
  type ScriptedAnswer,
  type ScriptedServer,
  sampleItem,
  scriptedClient,
  startScripted,
} from '../scripted-server.js';

const live = closedAfterEach<ScriptedServer>();

/**
 * A marketplace that refuses the first token it issued (so the client refreshes), answers the refresh
 * grant with `refresh`, and accepts every other token.
 */
async function refusingFirstToken(
  refresh: () => ScriptedAnswer,
  password: (n: number) => ScriptedAnswer = (n) => issuedToken(n),
): Promise<ScriptedServer> {
  let issued = 0;
  live.server = await startScripted((request) => {
    if (request.url.pathname === '/v1/oauth/token') {
      issued += 1;
      const grant = new URLSearchParams(request.body).get('grant_type');
      return grant === 'refresh_token' ? refresh() : password(issued);
    }
    if (request.authorization === 'Bearer access-1')
      return { status: 401, body: '{"error":"invalid_token"}' };
    if (request.url.pathname.startsWith('/v1/items/')) {
      const id = request.url.pathname.slice('/v1/items/'.length);
      return { status: 200, body: JSON.stringify(sampleItem(live.server?.baseUrl ?? '', id)) };
    }
    return { status: 200, body: '[]' };
  });
  return live.server;
}

describe('a refresh that fails', () => {
  it.each([
    ['403', { status: 403, body: '{"error":"forbidden"}' }],
    ['404', { status: 404, body: 'Not Found' }],
    ['405', { status: 405, body: '' }],
    ['200 without a token', { status: 200, body: '{"token_type":"bearer"}' }],
    ['200 that is not JSON', { status: 200, body: '<html>ok</html>' }],
  ])('answered %s falls back to the password grant', async (_name, answer) => {
    const s = await refusingFirstToken(() => answer);
    live.client = scriptedClient(s.baseUrl);
    const reading = await readAll(live.client);
    expect(reading.items).toEqual([]);
    expect(s.grants()).toEqual(['password', 'refresh_token', 'password']);
    expect(s.requests.at(-1)?.authorization).toMatch(/^Bearer access-\d$/);
    expect(s.requests.at(-1)?.authorization).not.toBe('Bearer access-1');
  });

  it('with 5xx twice falls back to the password grant instead of spending the whole retry budget', async () => {
    const s = await refusingFirstToken(() => ({ status: 503, body: '{"error":"busy"}' }));
    live.client = scriptedClient(s.baseUrl);
    await readAll(live.client);
    expect(s.grants()).toEqual(['password', 'refresh_token', 'refresh_token', 'password']);
  });

  it('is tried once for many concurrent requests, then one password grant serves them all', async () => {
    const s = await refusingFirstToken(() => ({ status: 403, body: '{"error":"forbidden"}' }));
    live.client = scriptedClient(s.baseUrl);
    const ids = Array.from({ length: 12 }, (_, i) => `c${i}`);
    const items = await Promise.all(ids.map((id) => live.client?.fetchItem(`${s.baseUrl}/v1/items/${id}`)));
    expect(items.map((item) => item?.id)).toEqual(ids);
    expect(s.grants()).toEqual(['password', 'refresh_token', 'password']);
  });

  it('ends in a CredentialsError only when the password grant that follows is refused', async () => {
    const s = await refusingFirstToken(
      () => ({ status: 404, body: '' }),
      (n) => (n === 1 ? issuedToken(n) : { status: 400, body: '{"error":"invalid_grant"}' }),
    );
    live.client = scriptedClient(s.baseUrl);
    const failure = readAll(live.client);
    await expect(failure).rejects.toThrow(CredentialsError);
    await expect(failure).rejects.toThrow(
      "The marketplace refused the shop owner's login (MARKETPLACE_USERNAME / MARKETPLACE_PASSWORD) with HTTP 400: invalid_grant.",
    );
    expect(s.grants()).toEqual(['password', 'refresh_token', 'password']);
  });
});
