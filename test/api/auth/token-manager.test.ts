import { describe, expect, it } from 'vitest';
import { CredentialsError } from '../../../src/errors.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../../src/simulator/index.js';
import {
  capturedLogger,
  clientFor,
  closedAfterEach,
  RecordingTokenStore,
  readAll,
  withoutRaw,
} from '../helpers.js';

const live = closedAfterEach<Simulator>();

async function start(options: SimulatorOptions): Promise<Simulator> {
  live.server = await startSimulator({ seed: 3, ...options });
  return live.server;
}

describe('logging in', () => {
  it('refuses a wrong password at once with a CredentialsError naming the owner login, without the password', async () => {
    const s = await start({ items: 10 });
    const { logger, output } = capturedLogger();
    live.client = clientFor(s, { password: 'wrong-password-123', logger });
    const failure = readAll(live.client);
    await expect(failure).rejects.toThrow(
      "The marketplace refused the shop owner's login (MARKETPLACE_USERNAME / MARKETPLACE_PASSWORD) with HTTP 400: invalid_grant.",
    );
    await failure.catch((error: CredentialsError) => {
      expect(error).toBeInstanceOf(CredentialsError);
      expect(error.retryable).toBe(false);
    });
    // One refused request and no retry: the failure is immediate whatever the retry budget.
    expect(s.stats().tokenRefusals).toBe(1);
    expect(s.stats().listingRequests).toBe(0);
    expect(output()).not.toContain('wrong-password-123');
  });

  it('refuses a wrong client secret with a CredentialsError naming the application credentials', async () => {
    const s = await start({ items: 10 });
    live.client = clientFor(s, { clientSecret: 'not-the-secret' });
    const failure = readAll(live.client);
    await expect(failure).rejects.toThrow(
      "The marketplace refused the application's credentials (MARKETPLACE_CLIENT_ID / MARKETPLACE_CLIENT_SECRET) with HTTP 401: invalid_client.",
    );
    await failure.catch((error: CredentialsError) => expect(error.message).not.toContain('not-the-secret'));
  });

  it('logs in once for many concurrent requests', async () => {
    const s = await start({ items: 40 });
    live.client = clientFor(s);
    const urls = s.truth().map((item) => item.url);
    const items = await Promise.all(urls.map((url) => live.client?.fetchItem(url)));
    expect(items.map((item) => item?.id)).toEqual(s.truth().map((item) => item.id));
    expect(s.stats().tokenRequests.password).toBe(1);
  });
});

describe('keeping the token fresh', () => {
  it('refreshes a token before it expires and keeps the rotated refresh token', async () => {
    const s = await start({ items: 300, expiresIn: 0.3, faults: { latencyMs: 20 } });
    const store = new RecordingTokenStore();
    live.client = clientFor(s, { tokenStore: store });
    const reading = await readAll(live.client, { perPage: 10, maxInFlight: 1 });
    expect(reading.items.map(withoutRaw)).toEqual(s.truth());
    const { password, refresh_token } = s.stats().tokenRequests;
    expect(password).toBe(1);
    expect(refresh_token).toBeGreaterThan(1);
    const refreshTokens = store.history.map((t) => t.refreshToken);
    expect(new Set(refreshTokens).size).toBe(refreshTokens.length);
  });

  it('refreshes after a 401 and logs in again when the refresh token is refused', async () => {
    const s = await start({ items: 50 });
    const store = new RecordingTokenStore();
    await store.set({
      accessToken: 'revoked-token',
      refreshToken: 'revoked-refresh',
      renewAt: Date.now() + 60_000,
      grant: 'password',
    });
    live.client = clientFor(s, { tokenStore: store });
    const reading = await readAll(live.client, { perPage: 50 });
    expect(reading.items.map(withoutRaw)).toEqual(s.truth());
    expect(s.stats().tokenRefusals).toBe(1);
    expect(s.stats().tokenRequests.password).toBe(1);
    expect(store.history.at(-1)?.grant).toBe('password');
  });

  it('logs in again when refreshed tokens are refused, and stops refreshing after the first', async () => {
    const s = await start({ items: 400, expiresIn: 0.2, faults: { refreshDeadEnd: true, latencyMs: 20 } });
    live.client = clientFor(s);
    const reading = await readAll(live.client, { perPage: 10, maxInFlight: 2 });
    expect(reading.items.map(withoutRaw)).toEqual(s.truth());
    const stats = s.stats();
    expect(stats.faultsInjected.refreshDeadEnd).toBeGreaterThan(0);
    expect(stats.tokenRequests.refresh_token).toBe(1);
    expect(stats.tokenRequests.password).toBeGreaterThan(2);
  });
});

describe('secrets', () => {
  it('never writes a secret or a token to the log, even through failures and renewals', async () => {
    const s = await start({
      items: 600,
      expiresIn: 0.1,
      faults: {
        refreshDeadEnd: true,
        rate429: 0.1,
        rate5xx: 0.1,
        dropRate: 0.05,
        malformedRate: 0.05,
        latencyMs: 10,
      },
    });
    const { logger, output } = capturedLogger();
    const store = new RecordingTokenStore();
    live.client = clientFor(s, { logger, tokenStore: store });
    const reading = await readAll(live.client, { perPage: 10, maxInFlight: 4 });
    expect(reading.items).toHaveLength(600);
    const log = output();
    expect(log).toContain('retrying after');
    const secrets = [s.credentials.clientSecret, s.credentials.password, ...store.tokenValues()];
    // The run must have renewed tokens, or it proves nothing about them.
    expect(store.tokenValues().length).toBeGreaterThan(4);
    for (const secret of secrets) expect(log).not.toContain(secret);
  });
});
