import { describe, expect, it } from 'vitest';
import type { SettingNames } from '../../../src/api/client.js';
import { CredentialsError } from '../../../src/errors.js';
import { closedAfterEach, readAll } from '../helpers.js';
import { issuedToken, type ScriptedServer, scriptedClient, startScripted } from '../scripted-server.js';

const live = closedAfterEach<ScriptedServer>();

const FROM_FILE: SettingNames = {
  baseUrl: 'shops.north.base_url',
  clientId: 'shops.north.client_id',
  clientSecret: 'shops.north.client_secret_file',
  username: 'shops.north.username',
  password: 'shops.north.password_file',
};

async function refusingLogin(error: string, status = 400): Promise<ScriptedServer> {
  live.server = await startScripted(() => ({ status, body: JSON.stringify({ error }) }));
  return live.server;
}

describe('messages about rejected credentials name the settings as the user wrote them', () => {
  it('names the environment variables by default', async () => {
    const s = await refusingLogin('invalid_grant');
    live.client = scriptedClient(s.baseUrl);
    await expect(readAll(live.client)).rejects.toThrow(
      "The marketplace refused the shop owner's login (MARKETPLACE_USERNAME / MARKETPLACE_PASSWORD) with HTTP 400: invalid_grant.",
    );
  });

  it('names a config file’s keys for the owner’s login', async () => {
    const s = await refusingLogin('invalid_grant');
    live.client = scriptedClient(s.baseUrl, { settingNames: FROM_FILE });
    await expect(readAll(live.client)).rejects.toThrow(
      "The marketplace refused the shop owner's login (shops.north.username / shops.north.password_file) with HTTP 400: invalid_grant.",
    );
  });

  it('names a config file’s keys for the application’s credentials', async () => {
    const s = await refusingLogin('invalid_client', 401);
    live.client = scriptedClient(s.baseUrl, { settingNames: FROM_FILE });
    await expect(readAll(live.client)).rejects.toThrow(
      "The marketplace refused the application's credentials (shops.north.client_id / shops.north.client_secret_file) with HTTP 401: invalid_client.",
    );
  });

  it('names the owner’s setting when even a freshly issued token is refused', async () => {
    let n = 0;
    live.server = await startScripted((r) => {
      if (r.url.pathname !== '/v1/oauth/token') return { status: 401, body: '{"error":"invalid_token"}' };
      n += 1;
      return issuedToken(n);
    });
    live.client = scriptedClient(live.server.baseUrl, { settingNames: FROM_FILE });
    const failure = readAll(live.client);
    await expect(failure).rejects.toThrow(CredentialsError);
    await expect(failure).rejects.toThrow(
      'GET /v1/sell/shop/items?page=1&per_page=100 was refused with HTTP 401 even with a token freshly issued for the shop owner (shops.north.username).',
    );
  });

  it('names the base URL’s setting when refusing to send the token elsewhere', async () => {
    const s = await refusingLogin('invalid_grant');
    live.client = scriptedClient(s.baseUrl, { settingNames: FROM_FILE });
    await expect(live.client.fetchItem('https://elsewhere.example.com/v1/items/1')).rejects.toThrow(
      'Refusing to fetch https://elsewhere.example.com/v1/items/1: it is not below shops.north.base_url, and the token must not be sent elsewhere.',
    );
  });
});
