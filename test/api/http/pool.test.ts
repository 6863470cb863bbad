import { EventEmitter, once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers.js';
import { issuedToken, type ScriptedServer, scriptedClient, startScripted } from '../scripted-server.js';

const live = closedAfterEach<ScriptedServer>();

describe('the connection pool', () => {
  it('carries maxInFlight requests at once', async () => {
    const inFlight = 12;
    const arrivals = new EventEmitter();
    const allArrived = once(arrivals, 'all');
    let arrived = 0;
    // No item is answered until all of them have arrived: a smaller pool would wait forever.
    live.server = await startScripted(async (r) => {
      if (r.url.pathname === '/v1/oauth/token') return issuedToken(1);
      arrived += 1;
      if (arrived === inFlight) arrivals.emit('all');
      await allArrived;
      return { status: 404, body: '{"message":"gone"}' };
    });
    live.client = scriptedClient(live.server.baseUrl, { maxInFlight: inFlight });
    const c = live.client;
    const items = await Promise.all(
      Array.from({ length: inFlight }, (_, i) => c.fetchItem(`/v1/items/${i}`)),
    );
    expect(items).toEqual(Array.from({ length: inFlight }, () => null));
  });
});
