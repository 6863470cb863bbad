/**
 * An item read as exactly the text its current stored version was read from: its values are that
 * version's, known without reading them again.
 */
export interface UnchangedItem {
  readonly id: string;
  /** The stored version's item hash (its identity among the id's versions). */
  readonly hash: number;
}
