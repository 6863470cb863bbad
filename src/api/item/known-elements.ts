import type { StoredVersion, VouchedBody } from '../../domain/unchanged-item.js';
import { fitsParsed } from './byte-source.js';
import { exactElement, ITEM_LAYOUT, type ParsedElement } from './item-schema.js';
import { type ObjectSource, objectSource } from './json-source.js';
import type { SentElement as SentSpan } from './sent-text.js';

/** An element of a page as `SentIndex` is asked about it: its id and the hash of its bytes as sent. */
export interface SentElement {
  readonly id: string;
  readonly sent: number;
}

/** What a store knows of the bytes its current versions were read from. */
export interface SentIndex {
  /**
   * For each of a page's elements, in order, the current version of its id when it was read from bytes
   * hashing as its `sent`: asked once per page.
   */
  versionsOf(elements: readonly SentElement[]): (StoredVersion | undefined)[];
}

/**
 * The elements of a listing body (`spans`, delimited in `bytes` by `sentElements`), read element by
 * element: one whose bytes `previous` (the same page's answer before, as the store vouches for it)
 * holds is known unchanged from it, with no decoding, parsing or look-up; the others are decoded,
 * parsed and read with their exact numbers and unknown members. With no previous reading, those the
 * store has read from the same bytes elsewhere (`index`, one question for the page) are known
 * unchanged instead.
 * Undefined when an element is not JSON (the body then is not either). The reference is the body
 * parsed in full (`readListingBody` without an index), which it agrees with on every element it reads
 * (test/api/item/known-elements.test.ts).
 */
export function knownElements(
  bytes: Uint8Array,
  spans: readonly SentSpan[],
  index: SentIndex,
  previous?: VouchedBody,
): ParsedElement[] | undefined {
  const recorded = previous && recordedAt(previous);
  const elements: (ParsedElement | undefined)[] = [];
  const read: Read[] = [];
  const asked: SentElement[] = [];
  const askedOf: Read[] = [];
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const [at, { start, end, sent, source: scanned }] of spans.entries()) {
    const k = sent === undefined ? undefined : recorded?.get(sent);
    elements.push(previous && k !== undefined ? recordedElement(previous, k) : undefined);
    if (k !== undefined) continue;
    const text = buffer.toString('utf8', start, end);
    const json = parsedOrNot(text);
    if (json === NOT_JSON) return undefined;
    // The scan's source stands for the text's unless a key was written twice (`fitsParsed`); the text is
    // then garbage at once, where keeping a page's texts until its look-up outlived young collections.
    const fits = scanned !== undefined && fitsParsed(json, scanned);
    const element = { at, json, sent, source: fits ? scanned : objectSource(text, ITEM_LAYOUT, json) };
    read.push(element);
    const id = typeof json === 'object' && json !== null ? (json as { id?: unknown }).id : undefined;
    // Against a previous reading, a new element is almost always a changed item, which no look-up finds:
    // one statement per page cost more than reading the few elements that moved in from other pages.
    if (previous || sent === undefined || typeof id !== 'string') continue;
    asked.push({ id, sent });
    askedOf.push(element);
  }
  const found = asked.length > 0 ? index.versionsOf(asked) : [];
  for (const [k, unchanged] of found.entries()) {
    const { at, json, sent } = askedOf[k] as Read;
    if (unchanged !== undefined) elements[at] = { json, raw: '', sent, unchanged };
  }
  for (const { at, json, sent, source } of read) {
    if (elements[at] !== undefined) continue;
    const { raw } = exactElement(json, source);
    elements[at] = sent === undefined ? { json, raw } : { json, raw, sent };
  }
  return elements as ParsedElement[];
}

/** An element decoded and parsed: its place in the body, JSON.parse's value of it and what that loses. */
interface Read {
  readonly at: number;
  readonly json: unknown;
  readonly sent: number | undefined;
  readonly source: ObjectSource;
}

const NOT_JSON: unique symbol = Symbol('not JSON');

function parsedOrNot(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) return NOT_JSON;
    throw error;
  }
}

/** Where each hash of the previous reading's elements is. */
function recordedAt({ sent }: VouchedBody): Map<number, number> {
  const at = new Map<number, number>();
  for (const [k, hash] of sent.entries()) at.set(hash, k);
  return at;
}

function recordedElement({ ids, sent, versions, hashes }: VouchedBody, k: number): ParsedElement {
  return {
    json: { id: ids[k] },
    raw: '',
    sent: sent[k] as number,
    unchanged: { hash: hashes[k] as number, version: versions[k] as number },
  };
}
