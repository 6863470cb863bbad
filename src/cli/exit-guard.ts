/**
 * Exit status 0 means the command finished its work (for `sync`: the summary of a complete run was
 * printed). Node also ends a process with 0 when its event loop simply drains, which is what happens
 * when the command waits on a promise that nothing will ever settle: it would then look like success
 * with no output. The guard turns every way out other than the command's own outcome into a failure
 * with one sentence.
 */

/** What to say when the process is about to end before the command did. */
export const UNFINISHED =
  'shop-sync: the command ended without finishing its work (it was left waiting for something that never happened); nothing it reported is complete.';

export interface ExitGuard {
  /**
   * The process is to end with `code`, by the command's decision (its outcome, a closed pipe, a second
   * Ctrl-C): from now on the process exits as it says.
   */
  settle(code: number): void;
}

/**
 * Watches `proc` for an end that the command did not decide: the event loop draining (`beforeExit`) or
 * any `exit` with status 0 before `settle`. Either becomes status 1 and the sentence on stderr.
 */
export function installExitGuard(proc: NodeJS.Process = process): ExitGuard {
  let settled = false;
  let reported = false;
  const refuse = () => {
    if (settled) return;
    if (!reported) proc.stderr.write(`${UNFINISHED}\n`);
    reported = true;
    proc.exitCode = 1;
  };
  // Fires when nothing is left to wait for: the command's promise can no longer settle.
  proc.on('beforeExit', refuse);
  // A process.exit(0) from anywhere before the command ended (exit listeners may still change the status).
  proc.on('exit', (code) => {
    if (code === 0) refuse();
  });
  return {
    settle(code) {
      settled = true;
      proc.exitCode = code;
    },
  };
}
