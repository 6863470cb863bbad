import type { Worker } from 'bullmq';
import type { Logger } from '../src/log.js';

/** What the worker's stop closes, in the order it closes them. */
export interface ShutdownSteps {
  /** What would start new work (the schedules' healing, the ops port), before the workers. */
  readonly quiet: () => Promise<void>;
  /** Closed once their running jobs have stopped or been abandoned. */
  readonly workers: readonly Worker[];
  /** What the workers used (the queues, then Redis), once they are closed. */
  readonly release: () => Promise<void>;
}

/**
 * The worker's orderly stop, with the two signals the running syncs listen to: `stopping` at once (a
 * sync stops at its next safe point), `forced` once `graceSeconds` are over (what still runs is
 * abandoned, its job back to waiting, its run resumable). Closing twice waits for the same stop.
 */
export class OrderlyShutdown {
  private readonly stop = new AbortController();
  private readonly force = new AbortController();
  private closing: Promise<void> | undefined;
  readonly stopping = this.stop.signal;
  readonly forced = this.force.signal;

  constructor(
    private readonly graceSeconds: number,
    private readonly log: Logger,
  ) {}

  close(steps: ShutdownSteps): Promise<void> {
    this.closing ??= this.run(steps);
    return this.closing;
  }

  private async run({ quiet, workers, release }: ShutdownSteps): Promise<void> {
    this.log.info({ grace_seconds: this.graceSeconds }, 'worker stopping: no new jobs; running syncs stop');
    this.stop.abort();
    await quiet();
    const grace = setTimeout(() => {
      this.log.warn('shutdown grace over: stopping what still runs; its jobs go back to waiting');
      this.force.abort();
    }, this.graceSeconds * 1000);
    await Promise.all(workers.map((worker) => worker.close()));
    clearTimeout(grace);
    await release();
    this.log.info('worker stopped');
  }
}
