import { InterruptedError } from '../src/errors.js';

/**
 * At most `size` syncs of one worker process at once, across the shops' queues (each queue runs one
 * sync at a time; this bounds their sum). A wait for a slot ends with InterruptedError when `stop` fires.
 */
export class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  async take(stop: AbortSignal): Promise<() => void> {
    if (this.free > 0) {
      this.free -= 1;
      return this.releaser();
    }
    if (stop.aborted) throw stopped();
    await new Promise<void>((resolve, reject) => {
      const granted = () => {
        stop.removeEventListener('abort', onStop);
        resolve();
      };
      const onStop = () => {
        this.waiting.splice(this.waiting.indexOf(granted), 1);
        reject(stopped());
      };
      this.waiting.push(granted);
      stop.addEventListener('abort', onStop, { once: true });
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    };
  }
}

function stopped(): InterruptedError {
  return new InterruptedError('The worker stopped before this sync could start.');
}
