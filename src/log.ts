import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';
import type { LogFormat } from './config/settings.js';
import { REDACTED, SECRET_NAMES } from './secrets.js';

export type { Logger };

/** Paths pino blanks out wherever they appear in a log object: secrets never reach a log line. */
const REDACTED_PATHS = [...SECRET_NAMES, 'headers.authorization', ...SECRET_NAMES.map((name) => `*.${name}`)];

export interface LogOptions {
  /** `json`: one object a line, for machines; `pretty`: a readable line with the local time. */
  readonly format?: LogFormat;
  /** Colours in pretty lines: only for a terminal. */
  readonly colorize?: boolean;
}

/** Logs go to stderr so that stdout stays clean for a command's output (`--json`, CSV). */
export function createLogger(
  level: string,
  destination: pino.DestinationStream = pino.destination(2),
  options: LogOptions = {},
): Logger {
  const detailed = level === 'debug' || level === 'trace';
  const out =
    options.format === 'pretty'
      ? prettyStream(destination, options.colorize ?? false, detailed)
      : destination;
  const serializers: pino.LoggerOptions['serializers'] = detailed ? {} : { err: withoutStack };
  return pino(
    { level, base: undefined, redact: { paths: REDACTED_PATHS, censor: REDACTED }, serializers },
    out,
  );
}

/** An error as its type and sentence (its causes' included): stack traces are for LOG_LEVEL=debug. */
function withoutStack(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown;
  if (typeof serialized !== 'object' || serialized === null) return serialized;
  const { stack: _stack, ...rest } = serialized as { stack?: unknown };
  return rest;
}

/** How pino starts a line at level info (30); its fields follow. */
const INFO_LINE = '{"level":30,';

/**
 * pino-pretty's formatter applied in the same call as the write: a line is on the terminal before the
 * next one is logged, so it never interleaves with a progress line drawn in between. Unless `detailed`
 * (LOG_LEVEL debug or trace), an info line shows its message alone: a person at a terminal reads the
 * command's own output (a sync's summary), which its fields would only repeat; warnings and errors keep
 * theirs, and JSON logs keep every field.
 */
function prettyStream(
  destination: pino.DestinationStream,
  colorize: boolean,
  detailed: boolean,
): pino.DestinationStream {
  // Loaded only for pretty logs: machine-read logs do not pay for it at start-up.
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  const options = { colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true };
  const pretty = prettyFactory(options);
  const withoutFields = prettyFactory({ ...options, hideObject: true });
  // pino-pretty ends a line after its fields: one shown without them needs its end of line.
  const brief = detailed ? pretty : (line: string) => `${withoutFields(line).trimEnd()}\n`;
  return {
    write: (line: string) => destination.write((line.startsWith(INFO_LINE) ? brief : pretty)(line)),
  };
}

/** A logger that drops everything, for library callers and tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
