import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { DeliveryError } from '../errors.js';
import type { Notification } from './payload.js';

/** A receiver that has not answered within this long has not taken the notification. */
export const ANSWER_WITHIN_MS = 10_000;

/** The signature header's value: HMAC-SHA256 of the raw body under the secret, lowercase hex. */
export function signature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function notificationHeaders(
  notification: Notification,
  secret: string | undefined,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'shop-sync',
    'x-shop-sync-event': notification.event,
    'x-shop-sync-delivery': notification.delivery,
    ...(secret === undefined ? {} : { 'x-shop-sync-signature': signature(notification.body, secret) }),
  };
}

/**
 * Where a notification goes, for messages: scheme, host and port only. A webhook URL often carries its
 * own secret in the path or the query, which must not reach a log or `status`.
 */
export function shownTarget(url: string): string {
  return new URL(url).origin;
}

/**
 * One attempt: a POST that a 2xx answer takes. Anything else is a DeliveryError saying why: another
 * status (a redirect included: redirects are not followed, the receiver should be given its final URL),
 * no answer within ANSWER_WITHIN_MS, a connection that failed.
 */
export async function deliverOnce(
  url: string,
  notification: Notification,
  secret: string | undefined,
  signal?: AbortSignal,
): Promise<void> {
  const target = shownTarget(url);
  // A connection of its own, closed after: no socket kept alive to a receiver between deliveries.
  const dispatcher = new Agent({ connect: { timeout: ANSWER_WITHIN_MS }, pipelining: 0 });
  const timeout = AbortSignal.timeout(ANSWER_WITHIN_MS);
  try {
    const response = await request(url, {
      method: 'POST',
      headers: notificationHeaders(notification, secret),
      body: notification.body,
      dispatcher,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      headersTimeout: ANSWER_WITHIN_MS,
      bodyTimeout: ANSWER_WITHIN_MS,
    });
    // The answer's body is not needed, and a receiver may send a lot of it.
    await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    if (response.statusCode >= 200 && response.statusCode < 300) return;
    const redirect =
      response.statusCode >= 300 && response.statusCode < 400 ? ' (redirects are not followed)' : '';
    throw new DeliveryError(
      `The notification to ${target} was answered HTTP ${response.statusCode}${redirect}.`,
    );
  } catch (error) {
    if (error instanceof DeliveryError) throw error;
    if (timeout.aborted)
      throw new DeliveryError(
        `The notification to ${target} had no answer within ${ANSWER_WITHIN_MS / 1000} s.`,
      );
    if (signal?.aborted) throw signal.reason;
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new DeliveryError(`The notification to ${target} could not be sent (${code}).`, { cause: error });
  } finally {
    await dispatcher.destroy();
  }
}

export interface RetryWindow {
  /** Give up once the next attempt would start after this long. */
  readonly budgetMs: number;
  /** The first wait between attempts; each next one doubles, up to `maxWaitMs`. */
  readonly firstWaitMs: number;
  readonly maxWaitMs: number;
  readonly signal?: AbortSignal;
  readonly onRetry?: (error: DeliveryError, waitMs: number) => void;
}

/** The CLI's window: 30 s of retries, the first after half a second. */
export const CLI_RETRY: RetryWindow = { budgetMs: 30_000, firstWaitMs: 500, maxWaitMs: 8_000 };

/** Attempts until one is taken or the window is over: then the last attempt's DeliveryError. */
export async function deliverWithin(
  url: string,
  notification: Notification,
  secret: string | undefined,
  window: RetryWindow = CLI_RETRY,
): Promise<void> {
  const deadline = Date.now() + window.budgetMs;
  let wait = window.firstWaitMs;
  for (;;) {
    try {
      return await deliverOnce(url, notification, secret, window.signal);
    } catch (error) {
      if (!(error instanceof DeliveryError)) throw error;
      // Jitter: several shops' notifications to one receiver do not retry in step.
      const next = Math.round(wait * (0.75 + Math.random() * 0.5));
      if (Date.now() + next > deadline) throw error;
      window.onRetry?.(error, next);
      await sleep(next, undefined, { signal: window.signal });
      wait = Math.min(wait * 2, window.maxWaitMs);
    }
  }
}
