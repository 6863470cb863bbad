import { type AppConfig, loadConfig } from '../config/app-config.js';
import { createLogger, type Logger } from '../log.js';
import type { CliIO } from './io.js';
import { StatusLine } from './progress.js';

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
  for (const warning of config.warnings) log.warn(warning);
  return { config, log, status };
}
