import type { SyncProgress } from '../sync.js';

/** Redraws at most this often: faster is flicker nobody can read. */
const MIN_REDRAW_MS = 100;
const CLEAR_LINE = '\r\u001b[K';

/**
 * A live progress line for a terminal: pages, items and rate, redrawn in place and erased at the end
 * so that the summary that follows stands alone. Only for TTYs; piped output gets nothing.
 */
export class ProgressLine {
  private readonly startedAt: number;
  private lastDrawAt = Number.NEGATIVE_INFINITY;
  private drawn = false;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly label: string,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
  }

  readonly update = (progress: SyncProgress): void => {
    const at = this.now();
    if (at - this.lastDrawAt < MIN_REDRAW_MS) return;
    this.lastDrawAt = at;
    this.drawn = true;
    this.out.write(`${CLEAR_LINE}${progressText(this.label, progress, at - this.startedAt)}`);
  };

  clear(): void {
    if (this.drawn) this.out.write(CLEAR_LINE);
    this.drawn = false;
  }
}

export function progressText(label: string, progress: SyncProgress, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? Math.round((progress.items * 1000) / elapsedMs) : 0;
  const invalid = progress.invalid > 0 ? `, ${progress.invalid} invalid` : '';
  return `${label}: ${progress.pages} pages, ${progress.items} items${invalid} (${rate} items/s)`;
}
