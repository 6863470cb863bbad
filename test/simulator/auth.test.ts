import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { clientFields, getPath, passwordFields, postToken, sellToken } from './client.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ items: 30, credentials: { password: 'pw with spaces & symbols' } });
});
afterAll(() => sim.close());

const LISTING = '/v1/sell/shop/items';

describe('password grant', () => {
  it.each(['form', 'multipart', 'json'] as const)(
    'issues a sell token and a refresh token from a %s body',
    async (encoding) => {
      const { status, body } = await postToken(sim, passwordFields(sim), encoding);
      expect(status).toBe(200);
      expect(body).toMatchObject({ token_type: 'bearer', expires_in: 7200, scope: 'buy sell' });
      expect(body.access_token).toEqual(expect.stringMatching(/^[\w-]{32}$/));
      expect(body.refresh_token).toEqual(expect.stringMatching(/^[\w-]{32}$/));
      expect((await getPath(sim, `${LISTING}?per_page=1`, String(body.access_token))).status).toBe(200);
    },
  );

  it('issues tokens that are random and share nothing with the secrets', async () => {
    const first = await postToken(sim, passwordFields(sim));
    const second = await postToken(sim, passwordFields(sim));
    expect(first.body.access_token).not.toBe(second.body.access_token);
    const tokens = JSON.stringify([first.body, second.body]);
    for (const secret of Object.values(sim.credentials)) expect(tokens).not.toContain(secret);
  });

  it('accepts the client credentials in an HTTP Basic header', async () => {
    const { clientId, clientSecret, username, password } = sim.credentials;
    const response = await fetch(`${sim.baseUrl}/v1/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'password', username, password }),
    });
    expect(response.status).toBe(200);
  });

  it('refuses a wrong password with 400 invalid_grant', async () => {
    const { status, body } = await postToken(sim, { ...passwordFields(sim), password: 'wrong' });
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: 'invalid_grant' });
    expect(body).not.toHaveProperty('access_token');
  });

  it('refuses a wrong client secret with 401 invalid_client, whatever the grant', async () => {
    for (const fields of [passwordFields(sim), { grant_type: 'client_credentials', ...clientFields(sim) }]) {
      const { status, body } = await postToken(sim, { ...fields, client_secret: 'nope' });
      expect(status).toBe(401);
      expect(body).toMatchObject({ error: 'invalid_client' });
    }
  });

  it('refuses a password grant without a username as invalid_request', async () => {
    const { username: _, ...fields } = passwordFields(sim);
    const { status, body } = await postToken(sim, fields);
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: 'invalid_request' });
  });

  it('refuses a missing or unknown grant type', async () => {
    expect(await postToken(sim, clientFields(sim))).toMatchObject({
      status: 400,
      body: { error: 'invalid_request' },
    });
    expect(await postToken(sim, { grant_type: 'magic', ...clientFields(sim) })).toMatchObject({
      status: 400,
      body: { error: 'unsupported_grant_type' },
    });
  });

  it('refuses a JSON body that is not an object', async () => {
    const response = await fetch(`${sim.baseUrl}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '["grant_type"]',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('client_credentials grant', () => {
  it('issues a buy-only token without refresh token, refused on /sell with 403 but good for an item', async () => {
    const { status, body } = await postToken(
      sim,
      { grant_type: 'client_credentials', ...clientFields(sim) },
      'json',
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ token_type: 'bearer', scope: 'buy' });
    expect(body).not.toHaveProperty('refresh_token');
    const listing = await getPath(sim, LISTING, String(body.access_token));
    expect(listing.status).toBe(403);
    expect(await listing.json()).toMatchObject({ error: 'insufficient_scope' });
    const [first] = sim.truth();
    const item = await getPath(sim, new URL(String(first?.url)).pathname, String(body.access_token));
    expect(item.status).toBe(200);
  });
});

describe('refresh_token grant', () => {
  it('rotates the refresh token, omits scope, and refuses the old refresh token', async () => {
    const { refresh } = await sellToken(sim);
    const first = await postToken(sim, {
      grant_type: 'refresh_token',
      refresh_token: refresh,
      ...clientFields(sim),
    });
    expect(first.status).toBe(200);
    expect(first.body).not.toHaveProperty('scope');
    expect(first.body.refresh_token).not.toBe(refresh);
    expect((await getPath(sim, LISTING, String(first.body.access_token))).status).toBe(200);
    const replay = await postToken(sim, {
      grant_type: 'refresh_token',
      refresh_token: refresh,
      ...clientFields(sim),
    });
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const next = await postToken(
      sim,
      { grant_type: 'refresh_token', refresh_token: String(first.body.refresh_token), ...clientFields(sim) },
      'multipart',
    );
    expect(next.status).toBe(200);
  });

  it('accepts the refresh as a GET with query parameters, as the guide describes it', async () => {
    const { refresh } = await sellToken(sim);
    const query = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refresh,
      ...clientFields(sim),
    });
    const response = await fetch(`${sim.baseUrl}/v1/oauth/token/?${query}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toHaveProperty('refresh_token');
  });

  it('refuses other grants as a GET, so passwords never sit in a query string', async () => {
    const response = await fetch(`${sim.baseUrl}/v1/oauth/token?${new URLSearchParams(passwordFields(sim))}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('refuses an unknown refresh token and a missing one', async () => {
    const unknown = await postToken(sim, {
      grant_type: 'refresh_token',
      refresh_token: 'forged',
      ...clientFields(sim),
    });
    expect(unknown).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const missing = await postToken(sim, { grant_type: 'refresh_token', ...clientFields(sim) });
    expect(missing).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });
});

describe('bearer tokens on the listing', () => {
  it('answers 401 without a token and with an unknown one', async () => {
    expect((await getPath(sim, LISTING)).status).toBe(401);
    const response = await getPath(sim, LISTING, 'not-a-token');
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('invalid_token');
  });

  it('answers 401 once the token has expired, and a refreshed token works again', async () => {
    const shortLived = await startSimulator({ items: 5, expiresIn: 0.3 });
    try {
      const { access, refresh } = await sellToken(shortLived);
      expect((await getPath(shortLived, LISTING, access)).status).toBe(200);
      await sleep(400);
      const expired = await getPath(shortLived, LISTING, access);
      expect(expired.status).toBe(401);
      expect(await expired.json()).toMatchObject({ message: 'access token expired' });
      const refreshed = await postToken(shortLived, {
        grant_type: 'refresh_token',
        refresh_token: refresh,
        ...clientFields(shortLived),
      });
      expect(refreshed.body.expires_in).toBe(1);
      expect((await getPath(shortLived, LISTING, String(refreshed.body.access_token))).status).toBe(200);
    } finally {
      await shortLived.close();
    }
  });

  it('counts issued tokens by grant and refusals', async () => {
    const before = sim.stats();
    await sellToken(sim);
    await postToken(sim, { ...passwordFields(sim), password: 'wrong' });
    const after = sim.stats();
    expect(after.tokenRequests.password).toBe(before.tokenRequests.password + 1);
    expect(after.tokenRefusals).toBe(before.tokenRefusals + 1);
  });
});
