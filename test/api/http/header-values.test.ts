import { describe, expect, it } from 'vitest';
import { HttpClient } from '../../../src/api/http/http-client.js';
import { isHeaderSafe, isRequestSafe } from '../../../src/api/http/server-values.js';
import { ProtocolError } from '../../../src/errors.js';
import { HOSTILE_ACCESS_TOKENS } from '../../helpers/hostile-tokens.js';
import { closedAfterEach } from '../helpers.js';
import { type ScriptedServer, scriptedClient, startScripted } from '../scripted-server.js';

const live = closedAfterEach<ScriptedServer>();

describe('values that cannot be sent', () => {
  it.each(HOSTILE_ACCESS_TOKENS)('%s: not header-safe', (_kind, token) => {
    expect(isHeaderSafe(token)).toBe(false);
  });

  it('accepts what tokens are made of, Latin-1 included, and refuses lone surrogates in request values', () => {
    for (const ok of ['abc.DEF-123_~+/=', 'token with inner space', 'caf\u00e9'])
      expect(isHeaderSafe(ok)).toBe(true);
    expect(isRequestSafe('r\u00e9fresh-\u{1F511}')).toBe(true);
    for (const bad of ['a\nb', 'a\u0000', 'a\ud800b', 'a\udc00']) expect(isRequestSafe(bad)).toBe(false);
  });

  it('a request whose header cannot be sent fails at once, for good, and never wedges the pool', async () => {
    live.server = await startScripted(() => ({ status: 200, body: '{}' }));
    const http = new HttpClient({ baseUrl: live.server.baseUrl, connections: 2 });
    try {
      // Leading whitespace in a token is inside "Bearer <token>": sendable, though not as issued.
      for (const [kind, token] of HOSTILE_ACCESS_TOKENS.filter(([, t]) => t.trim() === t || /\s$/.test(t))) {
        const sent = http.request({
          method: 'GET',
          path: '/x',
          headers: { authorization: `Bearer ${token}` },
        });
        await expect(sent, kind).rejects.toBeInstanceOf(ProtocolError);
        await expect(sent, kind).rejects.toThrow(
          'GET /x was not sent: its authorization header would hold characters that cannot be sent in an HTTP header',
        );
      }
      // The pool still serves: undici was never handed the bad headers.
      expect((await http.request({ method: 'GET', path: '/x', deadline: Date.now() + 5_000 })).status).toBe(
        200,
      );
      expect(live.server.requests).toHaveLength(1);
    } finally {
      await http.close();
    }
  });
});

describe('an item url that cannot be sent as it was handed out', () => {
  it.each([
    ['a line break', '/v1/items/7\r\nX-Injected: yes'],
    ['a tab', '/v1/items/7\tX'],
    ['a NUL', '/v1/items/7\u0000'],
    ['a lone surrogate', '/v1/items/7\ud800'],
  ])('%s: is refused without a request (it would fetch another item)', async (_kind, path) => {
    live.server = await startScripted(() => ({ status: 404, body: '{}' }));
    const client = scriptedClient(live.server.baseUrl);
    try {
      await expect(client.fetchItem(`${live.server.baseUrl}${path}`)).rejects.toThrow(
        'Refusing to fetch an item by its url: the listing (GET /v1/sell/shop/items) returned a url that cannot be sent in a request.',
      );
      expect(live.server.requests).toHaveLength(0);
    } finally {
      await client.close();
    }
  });
});
