import path from 'node:path';
import { type ProcessResult, runNode } from '../../bench/faults/processes.js';

export type CliResult = ProcessResult;

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
  return runNode(BIN, args, env, cwd);
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
