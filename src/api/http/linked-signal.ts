/** A signal that follows others, and the way to stop following them. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Aborts the linked signal itself (a deadline, say). */
  abort(reason: unknown): void;
  /** Stops following the others: call it once the work the signal guards is over. */
  unlink(): void;
}

/**
 * A signal aborted as soon as any of `signals` is, with its reason. In place of AbortSignal.any, which
 * cost ~30 µs a call on Node 20 (two calls a listing request: 0.2 s of a 300,000-item resync), and keeps
 * following its sources until they are collected.
 */
export function linkedSignal(signals: readonly (AbortSignal | undefined)[]): LinkedSignal {
  const controller = new AbortController();
  const sources = signals.filter((signal) => signal !== undefined);
  const follow = function (this: AbortSignal) {
    controller.abort(this.reason);
  };
  const unlink = () => {
    for (const source of sources) source.removeEventListener('abort', follow);
  };
  for (const source of sources) {
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
    source.addEventListener('abort', follow, { once: true });
  }
  if (controller.signal.aborted) unlink();
  return { signal: controller.signal, abort: (reason) => controller.abort(reason), unlink };
}
