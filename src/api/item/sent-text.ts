import { isUtf8 } from 'node:buffer';
import { Hash53 } from '../../domain/hash53.js';
import { ByteSourceScanner, type ScannedSource } from './byte-source.js';
import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  skipSpace,
  valueEnd,
} from './json-bytes.js';
import type { ObjectLayout } from './json-source.js';

/**
 * Where each element of a listing body starts and ends in its bytes, and a hash of its bytes exactly as
 * sent: an item whose bytes hash as those its stored version was read from has that version's values
 * (reading is a function of the bytes), so it need not be decoded, parsed or read again. The bytes, not
 * the decoded text: a changed answer is then read element by element without decoding the elements it
 * shares with the answer before (decoding a page of the simulator's items, each with a name in Unicode,
 * costs more than parsing it).
 */

/** One element of a JSON array's bytes: `bytes.subarray(start, end)`, and its hash. */
export interface SentElement {
  readonly start: number;
  readonly end: number;
  /**
   * The hash of an object's bytes (53 bits); undefined for any other value, and for bytes that decode
   * with U+FFFD (sent as such, or bytes that are not UTF-8) or may hold an escaped surrogate: reading
   * such an element replaces characters and warns, so it is always read.
   */
  readonly sent: number | undefined;
  /**
   * What JSON.parse loses of the object, read by the same scan (`sentElements` with a layout): only
   * for an object with a hash, whose bytes decode with no character replaced.
   */
  readonly source?: ScannedSource;
}

const BOM = [0xef, 0xbb, 0xbf];
const REPLACEMENT = Buffer.from('\ufffd');
/** What may be an escaped surrogate (`\uD800`-`\uDFFF`), whose reading may replace it. */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;

/**
 * The elements of the JSON array in `bytes` (after a byte order mark, which decoding drops), in order;
 * undefined unless the bytes between them are exactly an array's (brackets, commas, whitespace), so
 * that the body is one JSON array if and only if each element is a JSON value. The elements themselves
 * are not checked: whoever reads one parses it. With a `layout`, the scan that delimits an object also
 * reads its `source` (`byte-source.ts`), so that a body read in full is scanned once.
 */
export function sentElements(bytes: Uint8Array, layout?: ObjectLayout): SentElement[] | undefined {
  const scan = new ElementScan(bytes, layout);
  return arrayElements(bytes, (start) => scan.element(start), []);
}

/** Elements delimited by scanning their bytes, each hashed when it is an object that may be. */
class ElementScan {
  private readonly buffer: Buffer;
  private readonly scanner: ByteSourceScanner | undefined;
  /** Whether any element may need its characters replaced: searched once per body, natively, and
   * element by element only in the rare body that may need it. */
  private mayReplace: boolean | undefined;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly layout: ObjectLayout | undefined,
  ) {
    this.buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.scanner = layout && new ByteSourceScanner(bytes, this.buffer);
  }

  /** The element at `start`; undefined when it runs past the end of the bytes. */
  element(start: number): SentElement | undefined {
    const { bytes, buffer, layout, scanner } = this;
    const isObject = bytes[start] === OPEN_BRACE;
    const source = isObject && layout ? scanner?.scan(start, layout) : undefined;
    const end = source === undefined ? valueEnd(bytes, start) : scanner?.end;
    if (end === undefined) return undefined;
    this.mayReplace ??= bodyMayReplace(buffer);
    const hashed = isObject && !(this.mayReplace && mayBeReplaced(buffer.subarray(start, end)));
    if (!hashed) return { start, end, sent: undefined };
    const sent = sentHash(bytes, start, end);
    return source === undefined ? { start, end, sent } : { start, end, sent, source };
  }
}

/** What a page's answer before held, element by element: the hash of each one's bytes and their length. */
export interface SentHints {
  readonly sent: readonly number[];
  readonly lengths: readonly number[];
}

/**
 * `sentElements` guided by the elements the same page held before (`hints`): where the next element
 * is expected to be one of them again, its bytes are only hashed over that element's length, not
 * scanned for their structure; any other element is scanned as `sentElements` scans it (with the
 * `source` it reads by `layout`). A 1 % resync reads about two thirds of the pages changed, each with
 * one or two changed elements among a hundred: scanning every byte of them was most of reading them.
 * The result is `sentElements`'s, whatever the hints (test/api/item/known-elements.test.ts): bytes
 * that hash as an element held before are that element (a collision is 2^-53 a comparison, the trust
 * `knownElements` already puts in the hash), so they end where its scan ended, and an object's hash is
 * given exactly when the scan gives it.
 */
export function sentElementsAgainst(
  bytes: Uint8Array,
  hints: SentHints,
  layout?: ObjectLayout,
): SentElement[] | undefined {
  const scan = new ElementScan(bytes, layout);
  const at = new Map<number, number>();
  for (const [k, hash] of hints.sent.entries()) at.set(hash, k);
  let expected = 0;
  const next = (start: number): SentElement | undefined => {
    const guess = guessed(bytes, start, hints, expected);
    if (guess !== undefined) {
      expected += 1;
      return guess;
    }
    const element = scan.element(start);
    const k = element?.sent === undefined ? undefined : at.get(element.sent);
    // An element in the place of the one expected (changed) moves the expectation on by one; one held
    // elsewhere before puts it after that one.
    expected = k === undefined ? expected + 1 : k + 1;
    return element;
  };
  return arrayElements(bytes, next, []);
}

/** The element expected at `start` when its bytes are exactly those the hints hold for it. */
function guessed(bytes: Uint8Array, start: number, hints: SentHints, k: number): SentElement | undefined {
  const length = hints.lengths[k];
  const sent = hints.sent[k];
  if (length === undefined || sent === undefined || length < 2) return undefined;
  const end = start + length;
  if (end > bytes.length || bytes[start] !== OPEN_BRACE || bytes[end - 1] !== CLOSE_BRACE) return undefined;
  return sentHash(bytes, start, end) === sent ? { start, end, sent } : undefined;
}

/**
 * The elements `next` finds one after another in the JSON array of `bytes`, each after the bytes that
 * may come between elements; undefined when those bytes are not exactly an array's or `next` finds none.
 */
function arrayElements(
  bytes: Uint8Array,
  next: (start: number) => SentElement | undefined,
  elements: SentElement[],
): SentElement[] | undefined {
  let at = skipSpace(bytes, startsWithBom(bytes) ? BOM.length : 0);
  if (bytes[at] !== OPEN_BRACKET) return undefined;
  at = skipSpace(bytes, at + 1);
  if (bytes[at] === CLOSE_BRACKET) return skipSpace(bytes, at + 1) === bytes.length ? elements : undefined;
  for (;;) {
    const element = next(at);
    if (element === undefined) return undefined;
    elements.push(element);
    at = skipSpace(bytes, element.end);
    if (bytes[at] === CLOSE_BRACKET) return skipSpace(bytes, at + 1) === bytes.length ? elements : undefined;
    if (bytes[at] !== COMMA) return undefined;
    at = skipSpace(bytes, at + 1);
  }
}

/** Whether any element of the body may be read with replaced characters: searched once, natively. */
function bodyMayReplace(buffer: Buffer): boolean {
  return !isUtf8(buffer) || buffer.includes(REPLACEMENT) || buffer.includes('\\u');
}

/** The hash of `bytes` from `start` to `end` (`Hash53`). */
export function sentHash(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return new Hash53().bytes(bytes, start, end).digest();
}

function startsWithBom(bytes: Uint8Array): boolean {
  return BOM.every((byte, i) => bytes[i] === byte);
}

function mayBeReplaced(element: Buffer): boolean {
  return (
    !isUtf8(element) || element.includes(REPLACEMENT) || ESCAPED_SURROGATE.test(element.toString('latin1'))
  );
}
