import { constants } from 'node:os';
import { installExitGuard } from './exit-guard.js';
import type { CliIO } from './io.js';
import { run } from './program.js';

/** The process edge: signals become an abort, the command's outcome becomes the exit status. */
function main(): void {
  const guard = installExitGuard();
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  // Shells expect 128 + the signal's number from a command a signal stopped (130 for Ctrl-C).
  const signalled = () => 128 + (received ? constants.signals[received] : 0);
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      guard.settle(signalled());
      process.exit();
    }
    received = signal;
    controller.abort(new Error(`received ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A reader that stops early (`| head`) closes the pipe: end quietly, as any Unix filter does.
  // Other write failures also reach the write that failed; they are kept for output nobody awaited.
  let stdoutError: Error | undefined;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') {
      guard.settle(0);
      process.exit();
    }
    stdoutError = error;
  });
  const io: CliIO = {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  };
  run(process.argv.slice(2), io).then(
    (code) => {
      if (code === 0 && stdoutError) {
        process.stderr.write(`shop-sync: cannot write to standard output: ${stdoutError.message}\n`);
        guard.settle(1);
      } else guard.settle(code !== 0 && received ? signalled() : code);
      // Only now may the process end with 0: before, the exit guard counts any end as a failure.
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      // A command stopped by a signal is done: what it abandoned (the worker's syncs past their grace)
      // must not keep the process alive.
      if (controller.signal.aborted) process.exit();
    },
    (error: unknown) => {
      process.stderr.write(`shop-sync: ${String(error)}\n`);
      guard.settle(1);
      process.exit();
    },
  );
}

main();
