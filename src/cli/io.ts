/**
 * What a command may touch of the process it runs in; main.ts fills it from the real process. It
 * imports nothing: every command's definition uses it, and `--help` loads no more than those.
 */
export interface CliIO {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Aborted on SIGINT/SIGTERM: long commands stop at the next safe point. */
  readonly signal: AbortSignal;
}

export function writeLine(stream: NodeJS.WritableStream, text: string): void {
  stream.write(`${text}\n`);
}
