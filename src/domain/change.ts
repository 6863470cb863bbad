import type { Item, TrackedField } from './item.js';

export type ChangeKind = 'added' | 'removed' | 'updated';

/** One item's difference between two complete runs. */
export interface Change {
  readonly change: ChangeKind;
  readonly id: string;
  /** The title after the change, or before it for a removal. */
  readonly title: string;
  /** The tracked fields whose values differ, in TRACKED_FIELDS order; empty for added and removed. */
  readonly fields: readonly TrackedField[];
  readonly before: Item | null;
  readonly after: Item | null;
}
