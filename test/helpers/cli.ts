import { spawn } from 'node:child_process';
import path from 'node:path';

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

const BIN = path.resolve('bin/shop-sync.js');

/**
 * Runs the built CLI as users do, with a clean environment: only PATH and HOME from this process, so that
 * nothing on the test machine leaks into the command's configuration.
 */
export function runCli(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  cwd = process.cwd(),
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The keys of `sync --json` and `trigger --wait --json`, in the contract's order. */
export const SYNC_JSON_KEYS = [
  'shop',
  'run',
  'status',
  'pages',
  'items',
  'added',
  'updated',
  'removed',
  'invalid',
  'duration_ms',
];
