import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DeliveryError } from '../../src/errors.js';
import { ANSWER_WITHIN_MS, deliverOnce, deliverWithin, signature } from '../../src/notify/deliver.js';
import type { Notification } from '../../src/notify/payload.js';
import { notificationOf } from '../../src/notify/payload.js';

const notification: Notification = {
  shop: 'north',
  event: 'sync.complete',
  delivery: 'north:3:sync.complete',
  body: '{"shop":"north"}',
};

describe('notification signatures', () => {
  it('are sha256= and the lowercase hex HMAC-SHA256 of the raw body', () => {
    // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
    expect(signature('what do ya want for nothing?', 'Jefe')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });
});

describe('notification bodies', () => {
  it('carry a failure as the sentence, what was read, and no feeds', () => {
    const failed = notificationOf({
      shop: 'north',
      finishedAt: new Date('2026-11-25T12:00:00Z'),
      status: 'failed',
      run: 7,
      error: new Error('MARKETPLACE_PASSWORD was refused (HTTP 401).'),
      progress: { phase: 'reading', pages: 2, items: 200, invalid: 1 },
      duration_ms: 1500,
    });
    expect(failed.delivery).toBe('north:7:sync.failed');
    expect(JSON.parse(failed.body)).toEqual({
      shop: 'north',
      run: 7,
      status: 'failed',
      pages: 2,
      items: 200,
      added: 0,
      updated: 0,
      removed: 0,
      invalid: 1,
      duration_ms: 1500,
      event: 'sync.failed',
      finished_at: '2026-11-25T12:00:00.000Z',
      error: 'MARKETPLACE_PASSWORD was refused (HTTP 401).',
      feeds: null,
    });
  });
});

describe('one delivery', () => {
  it('is not taken by a receiver that does not answer within 10 s, nor retried past its window', async () => {
    const hung: ServerResponse[] = [];
    const server = createServer((_request, response) => hung.push(response));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?token=in-the-url`;
    try {
      const started = Date.now();
      const error = await deliverOnce(url, notification, undefined).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as DeliveryError).code).toBe('NOTIFY_FAILED');
      expect((error as Error).message).toMatch(
        /^The notification to http:\/\/127\.0\.0\.1:\d+ had no answer within 10 s\.$/,
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(ANSWER_WITHIN_MS - 100);
      // A window shorter than one wait makes one attempt only.
      const retried = await deliverWithin(url, notification, undefined, {
        budgetMs: 100,
        firstWaitMs: 1_000,
        maxWaitMs: 1_000,
      }).catch((e: unknown) => e);
      expect(retried).toBeInstanceOf(DeliveryError);
      expect((retried as Error).message).not.toContain('in-the-url');
      expect(hung.length).toBe(2);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 40_000);
});
