import { hash } from 'node:crypto';
import type { KnownBody, StoredVersion, VouchedBody } from '../../domain/unchanged-item.js';
import { type ParsedElement, readableId } from '../item/item-schema.js';
import type { SentIndex } from '../item/known-elements.js';
import type { SentElement as SentSpan } from '../item/sent-text.js';

/**
 * Listing bodies read before, by digest (`bodyDigest`). What a body's elements are (their ids and the
 * hashes of their bytes) is a function of its bytes alone, so a body received again byte for byte needs
 * no decoding, parsing or scanning: on an unchanged resync of 100,000 items that was ~0.7 s of the
 * ~1.5 s the main thread spent. Its items are then known unchanged only through the store's own
 * versions (`SentIndex`), exactly as if each had been scanned: the reference this path is tested against
 * (test/api/listing/known-bodies.test.ts) is reading the body in full.
 */
export interface KnownBodies {
  /** The elements of the body with this digest, if it was read in full before. */
  elementsOf(digest: string): KnownBody | undefined;
  /**
   * The latest body read in full as `page` whose elements' versions the store vouches for as it
   * vouches for a body received again (`KnownBody.versions`): what a changed answer of that page is
   * read against, element by element.
   */
  previousOf(page: string): VouchedBody | undefined;
  /** Notes the elements of a body read in full as `page`, for a later run to know it by its digest. */
  learn(digest: string, elements: KnownBody, page: string): void;
}

/** SHA-256 of a body's bytes: a server cannot make two bodies share one (~0.05 s for 100,000 items). */
export function bodyDigest(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'base64');
}

/**
 * The elements of a body known before, each as the stored version read from its very bytes; undefined
 * unless every one is (the body is then read in full, as any other). The versions come from the body's
 * own row when the store vouches for them all (`KnownBody.versions`), else from `SentIndex` one by one.
 */
export function knownBody(body: KnownBody, versions: SentIndex): ParsedElement[] | undefined {
  return body.versions && body.hashes
    ? recordedBody(body, body.versions, body.hashes)
    : lookedUp(body, versions);
}

/** The reference of `knownBody`: each element's version looked up by its id and bytes. */
export function lookedUp({ ids, sent }: KnownBody, versions: SentIndex): ParsedElement[] | undefined {
  const found = versions.versionsOf(ids.map((id, i) => ({ id, sent: sent[i] as number })));
  const parsed: ParsedElement[] = [];
  for (const [i, id] of ids.entries()) {
    const unchanged = found[i];
    if (unchanged === undefined) return undefined;
    parsed.push({ json: { id }, raw: '', sent: sent[i] as number, unchanged });
  }
  return parsed;
}

function recordedBody(
  { ids, sent }: KnownBody,
  versions: readonly number[],
  hashes: readonly number[],
): ParsedElement[] {
  return ids.map((id, i) => ({
    json: { id },
    raw: '',
    sent: sent[i] as number,
    unchanged: { hash: hashes[i] as number, version: versions[i] as number },
  }));
}

/**
 * What a body read in full (its elements delimited as `spans`) is worth remembering as: every element
 * an object with an id as sent, a hash of its bytes and their length. Anything else (an element without an id, bytes whose reading replaces characters) is read in full
 * whenever it comes, so a body holding it is not remembered.
 */
export function knownElementsOf(
  elements: readonly ParsedElement[],
  spans: readonly SentSpan[],
): KnownBody | undefined {
  if (elements.length === 0) return undefined;
  const ids: string[] = [];
  const sent: number[] = [];
  const lengths = spans.map(({ start, end }) => end - start);
  const read: (StoredVersion | undefined)[] = [];
  for (const element of elements) {
    // Only objects have a hash of their bytes.
    const id = element.sent === undefined ? undefined : (element.json as { id?: unknown }).id;
    if (element.sent === undefined || typeof id !== 'string' || readableId(element.json) !== id)
      return undefined;
    ids.push(id);
    sent.push(element.sent);
    read.push(element.unchanged);
  }
  return { ids, sent, lengths, read };
}
