import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Every line the worker wrote to stderr so far. */
  readonly lines: string[];
  readonly exited: Promise<number | null>;
  /** SIGTERM, then the exit code once it has stopped. */
  stop(): Promise<number | null>;
}

export interface WorkerProcessOptions {
  /** The most file descriptors the worker may hold (the shell's `ulimit -n` before it starts node). */
  readonly fdLimit?: number;
}

/**
 * Starts `shop-sync worker` as a container would, with only `env` (and PATH), resolving once it logged
 * that it started. Add each to `started` to have it killed after the test.
 */
export async function startWorkerProcess(
  env: Readonly<Record<string, string>>,
  options: WorkerProcessOptions = {},
): Promise<WorkerProcess> {
  const bin = path.resolve('bin/shop-sync.js');
  const command =
    options.fdLimit === undefined
      ? { file: process.execPath, args: [bin, 'worker'] }
      : {
          file: '/bin/sh',
          args: ['-c', `ulimit -n ${options.fdLimit} && exec "$0" "$1" worker`, process.execPath, bin],
        };
  const child = spawn(command.file, command.args, {
    // At least info: the worker's 'worker started' line is what tells that it is up.
    env: { PATH: process.env.PATH ?? '', ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exited = once(child, 'close').then(([code]) => code as number | null);
  const started = new Promise<void>((resolve, reject) => {
    let buffered = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const complete = buffered.split('\n');
      buffered = complete.pop() ?? '';
      lines.push(...complete);
      if (complete.some((line) => line.includes('"worker started"'))) resolve();
    });
    exited.then((code) => reject(new Error(`worker exited with ${code}: ${lines.join('\n')}`)));
  });
  await started;
  return {
    child,
    lines,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Kills what a test left running. */
export async function killAll(workers: WorkerProcess[]): Promise<void> {
  for (const worker of workers.splice(0)) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
  }
}
