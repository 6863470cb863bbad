/** The stored version an item was read as, known from its text alone. */
export interface StoredVersion {
  /** The version's item hash (its identity among the id's versions). */
  readonly hash: number;
  /** The version's number (`item_versions.version`). */
  readonly version: number;
}

/**
 * An item read as exactly the text its current stored version was read from: its values are that
 * version's, known without reading them again.
 */
export interface UnchangedItem extends StoredVersion {
  readonly id: string;
}

/** An element of a listing body read in full before: its id, and the hash of its text as sent. */
export interface KnownElement {
  readonly id: string;
  readonly sent: number;
}
