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

/** The elements of a listing body read in full before: `ids[i]` and the hash of its text as sent,
 * `sent[i]`, for each element in order. */
export interface KnownBody {
  readonly ids: readonly string[];
  readonly sent: readonly number[];
  /**
   * `lengths[i]` is the length of element `i`'s bytes as sent, where the body was read with them
   * recorded: a changed answer of the same page is then delimited by them where it still holds them.
   */
  readonly lengths?: readonly number[];
  /**
   * `versions[i]` is the stored version element `i` was read as, with its item hash `hashes[i]`: given
   * only while the store knows every one of them still current, so that the body's items are known
   * unchanged with no look-up per element.
   */
  readonly versions?: readonly number[];
  readonly hashes?: readonly number[];
  /**
   * For a body just read in full: the version each element was known unchanged as, where it was, so
   * that learning the body looks up only the versions of the others.
   */
  readonly read?: readonly (StoredVersion | undefined)[];
}

/** A body's elements with the version the store vouches each still is: what a changed answer of the
 * same page is read against, element by element. */
export type VouchedBody = Required<Pick<KnownBody, 'ids' | 'sent' | 'versions' | 'hashes'>> &
  Pick<KnownBody, 'lengths'>;
