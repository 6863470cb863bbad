import { type AppConfig, loadConfig } from '../config/app-config.js';
import { createLogger, type Logger } from '../log.js';
import { StatusLine } from './progress.js';

/** What a command may touch of the process it runs in; main.ts fills it from the real process. */
export interface CliIO {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Aborted on SIGINT/SIGTERM: long commands stop at the next safe point. */
  readonly signal: AbortSignal;
}

export interface CommandContext {
  readonly config: AppConfig;
  readonly log: Logger;
  /** stderr's live status line; the logger writes through it, so log lines and progress never mix. */
  readonly status: StatusLine;
}

/** Config and logger for commands that need them (the simulator does not). */
export function commandContext(io: CliIO): CommandContext {
  const terminal = io.stderr.isTTY === true;
  const config = loadConfig(io.env, io.cwd, { stderrIsTerminal: terminal });
  const status = new StatusLine(io.stderr);
  const log = createLogger(config.logLevel, status, { format: config.logFormat, colorize: terminal });
  return { config, log, status };
}

export function writeLine(stream: NodeJS.WritableStream, text: string): void {
  stream.write(`${text}\n`);
}
