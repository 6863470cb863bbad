import { EventEmitter, once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { MarketplaceClient } from '../../src/api/client.js';
import { issuedToken, type ScriptedServer, scriptedClient, startScripted } from './scripted-server.js';

let server: ScriptedServer | undefined;
let client: MarketplaceClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

describe('the connection pool', () => {
  it('carries maxInFlight requests at once', async () => {
    const inFlight = 12;
    const arrivals = new EventEmitter();
    const allArrived = once(arrivals, 'all');
    let arrived = 0;
    // No item is answered until all of them have arrived: a smaller pool would wait forever.
    server = await startScripted(async (r) => {
      if (r.url.pathname === '/v1/oauth/token') return issuedToken(1);
      arrived += 1;
      if (arrived === inFlight) arrivals.emit('all');
      await allArrived;
      return { status: 404, body: '{"message":"gone"}' };
    });
    client = scriptedClient(server.baseUrl, { maxInFlight: inFlight });
    const c = client;
    const items = await Promise.all(
      Array.from({ length: inFlight }, (_, i) => c.fetchItem(`/v1/items/${i}`)),
    );
    expect(items).toEqual(Array.from({ length: inFlight }, () => null));
  });
});
