import { once } from 'node:events';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { markAnswered } from '../../../src/api/http/transport-failure.js';
import { ApiError } from '../../../src/errors.js';
import { closedAfterEach, readAll } from '../helpers.js';
import { issuedToken, type ScriptedServer, scriptedClient, startScripted } from '../scripted-server.js';

/** Room for scheduling and closing sockets around a bound that is the code's promise, not its speed. */
const SLACK_MS = 1_000;

const live = closedAfterEach<ScriptedServer>();

/** A base URL nobody listens on: connections to it are refused. */
async function refusingBaseUrl(): Promise<string> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return `http://127.0.0.1:${port}`;
}

/** The outcome of `work` and how long it took. */
async function timed<T>(work: () => Promise<T>): Promise<{ result: PromiseSettledResult<T>; ms: number }> {
  const started = Date.now();
  const [result] = await Promise.allSettled([work()]);
  return { result: result as PromiseSettledResult<T>, ms: Date.now() - started };
}

function reason(result: PromiseSettledResult<unknown>): Error {
  if (result.status !== 'rejected') throw new Error('expected a failure');
  return result.reason as Error;
}

describe('one retry budget per request', () => {
  it('keeps trying a refused connection until the budget is spent, not until a count of attempts', async () => {
    const seen: Array<number | 'network'> = [];
    const baseUrl = await refusingBaseUrl();
    // An outage, not a wrong port: this process had answers from that address before (see first-contact tests).
    markAnswered(new URL(baseUrl).origin);
    live.client = scriptedClient(baseUrl, {
      retry: { budgetMs: 2_000, baseDelayMs: 1, maxDelayMs: 50, maxAttempts: Number.POSITIVE_INFINITY },
      events: { response: (status) => seen.push(status) },
    });
    const c = live.client;
    const { result, ms } = await timed(() => readAll(c));
    const error = reason(result);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toMatch(
      /^POST \/v1\/oauth\/token failed after \d+ attempts in 1\.\d s \(budget 2 s\): the marketplace at 127\.0\.0\.1:\d+ did not answer \(the connection was refused, ECONNREFUSED\)$/,
    );
    // Spent: no retry is left out while a useful attempt still fits (the last leaves a tenth unused).
    expect(ms).toBeGreaterThanOrEqual(1_700);
    const attempts = Number(/after (\d+) attempts/.exec(error.message)?.[1]);
    expect(seen).toEqual(Array.from({ length: attempts }, () => 'network'));
    expect(ms).toBeLessThanOrEqual(2_000 + SLACK_MS);
  });

  it('counts the login it waits for: a token endpoint answering 503 ends within the one budget', async () => {
    live.server = await startScripted((r) =>
      r.url.pathname === '/v1/oauth/token' ? { status: 503, body: '{"message":"down"}' } : { status: 500 },
    );
    live.client = scriptedClient(live.server.baseUrl, {
      retry: { budgetMs: 1_500, baseDelayMs: 1, maxDelayMs: 50 },
    });
    const c = live.client;
    const { result, ms } = await timed(() => readAll(c));
    expect(reason(result).message).toMatch(
      /^POST \/v1\/oauth\/token \(grant password\) failed with HTTP 503 after \d+ attempts in 1\.\d s \(budget 1\.5 s\): down$/,
    );
    expect(ms).toBeLessThanOrEqual(1_500 + SLACK_MS);
  });

  it('does not restart the count when a request that already retried has to log in again', async () => {
    let listings = 0;
    let logins = 0;
    live.server = await startScripted((r) => {
      if (r.url.pathname === '/v1/oauth/token') {
        logins += 1;
        return logins === 1 ? issuedToken(1, { refresh_token: null }) : { status: 502, body: 'bad gateway' };
      }
      listings += 1;
      // Two server errors, then the token is refused: the renewal after them spends the same budget.
      return listings <= 2
        ? { status: 503, body: 'busy' }
        : { status: 401, body: '{"error":"invalid_token"}' };
    });
    live.client = scriptedClient(live.server.baseUrl, {
      retry: { budgetMs: 1_500, baseDelayMs: 1, maxDelayMs: 50 },
    });
    const c = live.client;
    const { result, ms } = await timed(() => c.fetchItem('/v1/items/a'));
    const message = reason(result).message;
    expect(message).toMatch(
      /^POST \/v1\/oauth\/token \(grant password\) failed with HTTP 502 after \d+ attempts in 1\.\d s \(budget 1\.5 s\): bad gateway$/,
    );
    // The two listing failures are among the attempts counted: the renewal's loop did not start from one.
    const attempts = Number(/after (\d+) attempts/.exec(message)?.[1]);
    expect(listings).toBe(3);
    expect(attempts).toBe(2 + (logins - 1));
    expect(ms).toBeLessThanOrEqual(1_500 + SLACK_MS);
  });

  it('with several requests waiting on one renewal, runs one login and gives them all its outcome within the budget', async () => {
    live.server = await startScripted((r) =>
      r.url.pathname === '/v1/oauth/token' ? { status: 503, body: 'login down' } : { status: 500 },
    );
    live.client = scriptedClient(live.server.baseUrl, {
      retry: { budgetMs: 1_000, baseDelayMs: 1, maxDelayMs: 50 },
    });
    const c = live.client;
    const started = Date.now();
    const results = await Promise.allSettled(
      ['a', 'b', 'c', 'd'].map((id) => c.fetchItem(`/v1/items/${id}`)),
    );
    const ms = Date.now() - started;
    const messages = results.map((r) => reason(r).message);
    expect(new Set(messages).size).toBe(1);
    expect(messages[0]).toMatch(
      /^POST \/v1\/oauth\/token \(grant password\) failed with HTTP 503 after \d+ attempts in [\d.]+ s \(budget 1 s\): login down$/,
    );
    expect(ms).toBeLessThanOrEqual(1_000 + SLACK_MS);
    expect(live.server.requests.filter((r) => r.url.pathname !== '/v1/oauth/token')).toEqual([]);
  });

  it('with several requests waiting on one renewal against an unreachable marketplace, ends within the budget', async () => {
    live.client = scriptedClient(await refusingBaseUrl(), {
      retry: { budgetMs: 1_000, baseDelayMs: 1, maxDelayMs: 50 },
    });
    const c = live.client;
    const started = Date.now();
    const results = await Promise.allSettled(['a', 'b', 'c'].map((id) => c.fetchItem(`/v1/items/${id}`)));
    expect(Date.now() - started).toBeLessThanOrEqual(1_000 + SLACK_MS);
    expect(new Set(results.map((r) => reason(r).message)).size).toBe(1);
  });
});
