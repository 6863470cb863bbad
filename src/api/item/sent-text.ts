import { Hash53 } from '../../domain/hash53.js';
import { closingQuote, containerEnd } from './json-source.js';

/**
 * Where each element of a listing body starts and ends, and a hash of its characters exactly as sent:
 * an item whose text hashes as the text its stored version was read from has that version's values
 * (reading is a function of the text), so it need not be read again. Run on every page of a sync:
 * ~0.1 s for 100,000 elements of ~850 characters on the bench machine, where normalising and hashing
 * the values of the same items cost ~0.5 s.
 */

/** One element of a JSON array's text: `text.slice(start, end)`, and its hash. */
export interface SentElement {
  readonly start: number;
  readonly end: number;
  /**
   * The hash of an object's text (53 bits); undefined for any other value, and for text holding U+FFFD
   * or an escaped surrogate: reading such text replaces characters and warns, so it is always read.
   */
  readonly sent: number | undefined;
}

const QUOTE = 0x22;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Text that reading may change: U+FFFD, or what may be an escaped surrogate (`\uD800`-`\uDFFF`). */
const REPLACED = /\ufffd|\\u[dD][89a-fA-F]/;

/**
 * The elements of the JSON array `text`, in order. `text` must already be known to parse as a JSON
 * array (JSON.parse said so): the pass trusts its structure and checks nothing.
 */
export function sentElements(text: string): SentElement[] {
  // Searched once per body (natively, a regular expression costs as much as the hash): elements are
  // searched one by one only in the rare body that may have any.
  const mayReplace = text.includes('\ufffd') || text.includes('\\u');
  const elements: SentElement[] = [];
  let at = text.indexOf('[') + 1;
  for (;;) {
    let c = text.charCodeAt(at);
    while (isSpace(c) || c === COMMA) c = text.charCodeAt(++at);
    if (c === CLOSE_BRACKET || at >= text.length) return elements;
    const start = at;
    at = valueEnd(text, at);
    const hashed = c === OPEN_BRACE && !(mayReplace && REPLACED.test(text.slice(start, at)));
    elements.push({ start, end: at, sent: hashed ? sentHash(text, start, at) : undefined });
  }
}

/** Index just past the value starting at `start`. */
function valueEnd(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return closingQuote(text, start) + 1;
  if (first === OPEN_BRACE || first === OPEN_BRACKET) return containerEnd(text, start);
  let at = start;
  while (at < text.length) {
    const c = text.charCodeAt(at);
    if (c === COMMA || c === CLOSE_BRACKET || c === CLOSE_BRACE || isSpace(c)) break;
    at += 1;
  }
  return at;
}

/** The hash of `text.slice(start, end)` (`Hash53`). */
export function sentHash(text: string, start: number, end: number): number {
  return new Hash53().text(text, start, end).digest();
}
