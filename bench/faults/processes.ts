import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ProcessResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The checkout's root, whether this runs from its source (vitest) or from dist/. */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
}

const ROOT = projectRoot();
/** The built CLI, run as users run it. */
export const CLI = path.join(ROOT, 'bin', 'shop-sync.js');
/** The built crash child (bench/ is compiled into dist/bench/). */
export const CRASH_CHILD = path.join(ROOT, 'dist', 'bench', 'faults', 'crash-child.js');

/**
 * Runs a node script with only the given environment (plus PATH and HOME), so that nothing on the
 * machine leaks into the configuration under test.
 */
export function runNode(
  script: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd = process.cwd(),
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
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
