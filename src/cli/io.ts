import { type AppConfig, loadConfig } from '../config.js';
import { createLogger, type Logger } from '../log.js';

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
}

/** Config and logger for commands that need them (the simulator does not). */
export function commandContext(io: CliIO): CommandContext {
  const config = loadConfig(io.env, io.cwd);
  return { config, log: createLogger(config.logLevel) };
}

export function writeLine(stream: NodeJS.WritableStream, text: string): void {
  stream.write(`${text}\n`);
}
