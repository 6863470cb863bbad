import pino, { type Logger } from 'pino';
import { REDACTED, SECRET_NAMES } from './secrets.js';

export type { Logger };

/** Paths pino blanks out wherever they appear in a log object: secrets never reach a log line. */
const REDACTED_PATHS = [...SECRET_NAMES, 'headers.authorization', ...SECRET_NAMES.map((name) => `*.${name}`)];

/** Logs go to stderr so that stdout stays clean for a command's output (`--json`, CSV). */
export function createLogger(
  level: string,
  destination: pino.DestinationStream = pino.destination(2),
): Logger {
  return pino({ level, base: undefined, redact: { paths: REDACTED_PATHS, censor: REDACTED } }, destination);
}

/** A logger that drops everything, for library callers and tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
