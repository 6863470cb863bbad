import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import { closedAfterEach, readAll } from '../helpers.js';
import { issuedToken, type ScriptedServer, scriptedClient, startScripted } from '../scripted-server.js';

/** Room for scheduling and closing sockets around a bound that is the code's promise, not its speed. */
const SLACK_MS = 1_500;

const live = closedAfterEach<ScriptedServer>();

const LISTING = JSON.stringify({ items: [] });

describe('a server that drips its body one byte at a time', () => {
  it('fails the read within the retry budget, saying the deadline was passed', async () => {
    live.server = await startScripted((r) =>
      r.url.pathname === '/v1/oauth/token' ? issuedToken(1) : { status: 200, body: LISTING, dripMs: 200 },
    );
    // Every byte arrives well within the per-chunk body timeout, so only a total deadline can end this.
    live.client = scriptedClient(live.server.baseUrl, {
      timeouts: { bodyMs: 5_000 },
      retry: { budgetMs: 2_000, baseDelayMs: 1, maxDelayMs: 20 },
    });
    const started = Date.now();
    const failure = readAll(live.client);
    await expect(failure).rejects.toThrow(ApiError);
    await expect(failure).rejects.toThrow(
      /^GET \/v1\/sell\/shop\/items\?page=1&per_page=100 failed after 1 attempt in [\d.]+ s \(budget 2 s\): the response was not complete within the [\d.]+ s deadline of one attempt$/,
    );
    expect(Date.now() - started).toBeLessThanOrEqual(2_000 + SLACK_MS);
  });

  it('retries an attempt past its own total timeout as long as the budget lasts', async () => {
    live.server = await startScripted((r) =>
      r.url.pathname === '/v1/oauth/token' ? issuedToken(1) : { status: 200, body: LISTING, dripMs: 100 },
    );
    live.client = scriptedClient(live.server.baseUrl, {
      timeouts: { bodyMs: 5_000, totalMs: 300 },
      retry: { budgetMs: 2_000, baseDelayMs: 1, maxDelayMs: 20 },
    });
    const started = Date.now();
    const failure = readAll(live.client);
    await expect(failure).rejects.toThrow(
      /^GET \/v1\/sell\/shop\/items\?page=1&per_page=100 failed after \d+ attempts in [\d.]+ s \(budget 2 s\): the response was not complete within the 0.3 s deadline of one attempt$/,
    );
    expect(Date.now() - started).toBeLessThanOrEqual(2_000 + SLACK_MS);
    expect(live.server.listingPages().length).toBeGreaterThan(2);
  });
});
