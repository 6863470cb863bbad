import type { SyncPhase, SyncProgress } from '../sync/index.js';

/** Redraws at most this often: faster is flicker nobody can read. */
const MIN_REDRAW_MS = 100;
const CLEAR_LINE = '\r\u001b[K';

/**
 * stderr shared by log lines and one live status line at the bottom: a log line clears the status
 * line, is written, and the status line is drawn again under it, so the two never run together.
 * The logger writes through it (it is a pino destination).
 */
export class StatusLine {
  private shown = '';

  constructor(private readonly out: NodeJS.WritableStream) {}

  /** Log text (whole lines) above the status line. */
  write(text: string): boolean {
    return this.out.write(this.shown === '' ? text : `${CLEAR_LINE}${text}${this.shown}`);
  }

  show(text: string): void {
    this.shown = text;
    this.out.write(`${CLEAR_LINE}${text}`);
  }

  clear(): void {
    if (this.shown !== '') this.out.write(CLEAR_LINE);
    this.shown = '';
  }
}

/**
 * A live progress line for a terminal: the phase, pages, items and rate, redrawn in place and erased
 * at the end so that the summary that follows stands alone. Only for TTYs; piped output gets nothing.
 */
export class ProgressLine {
  private readonly startedAt: number;
  private lastDrawAt = Number.NEGATIVE_INFINITY;
  private lastPhase: SyncPhase | undefined;

  constructor(
    private readonly status: StatusLine,
    private readonly label: string,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
  }

  readonly update = (progress: SyncProgress): void => {
    const at = this.now();
    // A new phase is drawn at once: it is what tells the user why the numbers stopped moving.
    if (at - this.lastDrawAt < MIN_REDRAW_MS && progress.phase === this.lastPhase) return;
    this.lastDrawAt = at;
    this.lastPhase = progress.phase;
    this.status.show(progressText(this.label, progress, at - this.startedAt));
  };

  clear(): void {
    this.status.clear();
  }
}

const PHASE_TEXT: Record<SyncPhase, string> = {
  reading: 'reading pages',
  confirming: 'confirming removals',
  committing: 'committing',
  feeds: 'writing feeds',
};

export function progressText(label: string, progress: SyncProgress, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? Math.round((progress.items * 1000) / elapsedMs) : 0;
  const invalid = progress.invalid > 0 ? `, ${progress.invalid} invalid` : '';
  return `${label}, ${PHASE_TEXT[progress.phase]}: ${progress.pages} pages, ${progress.items} items${invalid} (${rate} items/s)`;
}
