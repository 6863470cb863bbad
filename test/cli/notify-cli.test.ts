import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runCli, SYNC_JSON_KEYS } from '../helpers/cli.js';
import { type Received, Receiver, validSignature } from '../helpers/receiver.js';
import { simEnv, tempDir } from '../store/fixtures.js';

const SECRET = 'receiver-shared-secret';
let sim: Simulator;
let temp: ReturnType<typeof tempDir>;
let receiver: Receiver;

beforeAll(async () => {
  sim = await startSimulator({ items: 120, seed: 31 });
});
afterAll(() => sim.close());
beforeEach(async () => {
  temp = tempDir('shop-sync-notify-cli-');
  receiver = await new Receiver().start();
});
afterEach(async () => {
  await receiver.stop();
  temp.cleanup();
});

const env = (extra: Record<string, string> = {}) => ({
  ...simEnv(sim, temp.dir),
  SYNC_PER_PAGE: '40',
  NOTIFY_URL: receiver.url,
  NOTIFY_SECRET: SECRET,
  ...extra,
});

/** Nothing secret in what was sent: not the credentials, not a token the simulator issued. */
function expectNoSecrets(received: readonly Received[]): void {
  const sent = JSON.stringify(received);
  for (const secret of [
    sim.credentials.clientSecret,
    sim.credentials.password,
    SECRET,
    ...sim.issuedTokens(),
  ])
    expect(sent).not.toContain(secret);
}

describe('sync with NOTIFY_URL', () => {
  it('delivers a signed sync.complete through a receiver that fails, goes away and comes back, one delivery id throughout', async () => {
    receiver.answer = (_request, count) => {
      // The second failure takes the receiver away for a while; it comes back on the same port.
      if (count === 2)
        setImmediate(async () => {
          await receiver.stop();
          setTimeout(() => void receiver.start(), 2_000);
        });
      return { status: count <= 2 ? 503 : 204 };
    };
    const result = await runCli(['sync', '--json'], env({ LOG_LEVEL: 'info' }));
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(Object.keys(summary)).toEqual(SYNC_JSON_KEYS);

    expect(receiver.received.length).toBe(3);
    const deliveries = new Set(receiver.received.map((r) => r.headers['x-shop-sync-delivery']));
    expect([...deliveries]).toEqual([`shop:${summary.run}:sync.complete`]);
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    const [last] = receiver.received.slice(-1) as [Received];
    expect(last.headers['content-type']).toBe('application/json');
    expect(last.headers['x-shop-sync-event']).toBe('sync.complete');
    expect(validSignature(last, SECRET)).toBe(true);
    expect(validSignature(last, 'another secret')).toBe(false);
    const body = JSON.parse(last.body);
    expect(body).toEqual({
      ...summary,
      event: 'sync.complete',
      finished_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      error: null,
      feeds: 'shop/feeds',
    });
    expect(Object.keys(body)).toEqual([...SYNC_JSON_KEYS, 'event', 'finished_at', 'error', 'feeds']);
    expectNoSecrets(receiver.received);
    expect(result.stderr).toContain('notification not taken yet');
    expect(result.stderr).not.toContain('Warning');
  });

  it('delivers sync.failed with the sentence the CLI prints, and keeps the exit status', async () => {
    const result = await runCli(['sync', '--json'], env({ MARKETPLACE_PASSWORD: 'wrong-password' }));
    expect(result.code).toBe(1);
    expect(receiver.received.length).toBe(1);
    const [received] = receiver.received as [Received];
    expect(received.headers['x-shop-sync-event']).toBe('sync.failed');
    expect(received.headers['x-shop-sync-delivery']).toMatch(/^shop:\d+:sync\.failed$/);
    const body = JSON.parse(received.body);
    expect(body).toMatchObject({ shop: 'shop', status: 'failed', event: 'sync.failed', feeds: null });
    expect(result.stderr).toContain(body.error);
    expect(JSON.stringify(received)).not.toContain('wrong-password');
    expectNoSecrets(receiver.received);
    expect(validSignature(received, SECRET)).toBe(true);
  });

  it('tells a failure before any run began as run null', async () => {
    const notADirectory = path.join(temp.dir, 'a-file');
    writeFileSync(notADirectory, 'not a directory\n');
    const result = await runCli(['sync'], env({ DATA_DIR: notADirectory }));
    expect(result.code).toBe(1);
    const [received] = receiver.received as [Received];
    expect(received.headers['x-shop-sync-delivery']).toBe('shop:null:sync.failed');
    const body = JSON.parse(received.body);
    expect(body).toMatchObject({ run: null, status: 'failed', event: 'sync.failed', feeds: null });
    expect(result.stderr).toContain(body.error);
    expect(readFileSync(notADirectory, 'utf8')).toBe('not a directory\n');
  });

  it('sends unsigned without a secret', async () => {
    const result = await runCli(['sync'], env({ NOTIFY_SECRET: '' }));
    expect(result.code).toBe(0);
    expect(receiver.received[0]?.headers['x-shop-sync-signature']).toBeUndefined();
  });

  it('follows no redirect, and gives up after 30 s with a warning, the sync and its exit status intact', async () => {
    const elsewhere = await new Receiver().start();
    try {
      receiver.answer = () => ({ status: 307, location: elsewhere.url });
      const started = Date.now();
      const result = await runCli(['sync', '--json'], env());
      const took = Date.now() - started;
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ status: 'complete', items: 120 });
      expect(elsewhere.received).toEqual([]);
      expect(receiver.received.length).toBeGreaterThan(3);
      expect(new Set(receiver.received.map((r) => r.headers['x-shop-sync-delivery'])).size).toBe(1);
      expect(result.stderr).toMatch(
        /shop-sync: Warning: The notification to http:\/\/127\.0\.0\.1:\d+ was answered HTTP 307 \(redirects are not followed\)\. Gave up on notification shop:\d+:sync\.complete after 30 s; the sync's result stands\./,
      );
      // What the sync wrote stands: its run complete, its feeds published.
      const runs = JSON.parse((await runCli(['runs', '--json'], env())).stdout);
      expect(runs[0]).toMatchObject({ run: JSON.parse(result.stdout).run, status: 'complete' });
      expect(existsSync(path.join(temp.dir, 'shop', 'feeds', 'inventory.csv'))).toBe(true);
      expect(took).toBeGreaterThan(15_000);
      expect(took).toBeLessThan(45_000);
    } finally {
      await elsewhere.stop();
    }
  }, 90_000);

  it('refuses a NOTIFY_URL that is not http(s) or carries a password, without echoing it', async () => {
    for (const url of ['ftp://example.com/x', 'https://user:hunter2@example.com/x']) {
      const result = await runCli(['sync'], env({ NOTIFY_URL: url }));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('NOTIFY_URL is invalid');
      expect(result.stderr).not.toContain('hunter2');
    }
    expect(receiver.received).toEqual([]);
  });
});
