/** Measured moves a planner remembers: enough to forget one burst of churn within a few pages. */
const MEMORY = 16;

/**
 * How the listing moved between two answers taken one after the other, lately: signed, in items (+ when
 * items were inserted before the reading's end, so that it moved further on; - when items before it were
 * deleted). A listing that grows before the reader at a steady pace is read with windows planned that
 * much further on (`lead`); the overlap only has to cover how far a move strays from that (`spread`).
 */
export class Drift {
  private readonly recent: number[] = [];

  /** The end moved by `shift` items per answer since the answer that proved it. */
  note(shift: number): void {
    this.recent.push(shift);
    if (this.recent.length > MEMORY) this.recent.shift();
  }

  /** A window missed what was proved: the listing moved by more than `overlap`, direction unknown. */
  missed(overlap: number): void {
    this.note(this.lead - overlap);
  }

  /** Items every recent answer moved the listing forward by, at least (two measures at least). */
  get lead(): number {
    if (this.recent.length < 2) return 0;
    return Math.max(0, Math.floor(Math.min(...this.recent)));
  }

  /** Whether a recent answer showed the listing moved. */
  get moved(): boolean {
    return this.recent.some((shift) => shift !== 0);
  }

  /** The most a recent move strayed from `lead`. */
  get spread(): number {
    const lead = this.lead;
    return Math.ceil(Math.max(0, ...this.recent.map((shift) => Math.abs(shift - lead))));
  }
}
