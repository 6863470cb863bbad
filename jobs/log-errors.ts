import type { Logger } from '../src/log.js';

interface EmitsErrors {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** The machine code of an error from Redis, the network or shop-sync (`ECONNREFUSED`, `STORE_LOCKED`). */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : (error as Error | null)?.name || 'ERROR';
}

/**
 * Gives `emitter` an `error` listener that logs one JSON line with the error's code. Without one, an
 * `error` event (a Redis outage) crashes the process or prints raw stack traces.
 */
export function logErrors<T extends EmitsErrors>(emitter: T, log: Logger, what: string): T {
  emitter.on('error', (error) =>
    log.warn({ code: errorCode(error), reason: error.message }, `${what} error`),
  );
  return emitter;
}
