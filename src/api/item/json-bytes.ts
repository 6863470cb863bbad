/**
 * JSON's structure read from UTF-8 bytes, shared by the scans over a listing body's bytes
 * (`sent-text.ts`, `byte-source.ts`). UTF-8 never puts an ASCII byte inside a character, so every
 * structural character is one byte and none can be mistaken inside a string's text.
 */

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

export function skipSpace(bytes: Uint8Array, from: number): number {
  let at = from;
  while (isSpace(bytes[at])) at += 1;
  return at;
}

/** Index just past the value starting at `start`; undefined when it runs past the end of the bytes. */
export function valueEnd(bytes: Uint8Array, start: number): number | undefined {
  const first = bytes[start];
  if (first === QUOTE) return stringEnd(bytes, start);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) return containerEnd(bytes, start);
  let at = start;
  for (; at < bytes.length; at += 1) {
    const c = bytes[at];
    if (c === COMMA || c === CLOSE_BRACKET || c === CLOSE_BRACE || isSpace(c)) break;
  }
  return at > start ? at : undefined;
}

/** Index just past the object or array opened at `open`. */
export function containerEnd(bytes: Uint8Array, open: number): number | undefined {
  let depth = 0;
  for (let at = open; at < bytes.length; at += 1) {
    const c = bytes[at];
    if (c === QUOTE) {
      const end = stringEnd(bytes, at);
      if (end === undefined) return undefined;
      at = end - 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
      if (depth === 0) return at + 1;
    }
  }
  return undefined;
}

/** Index just past the string opened at `open`. */
export function stringEnd(bytes: Uint8Array, open: number): number | undefined {
  let at = bytes.indexOf(QUOTE, open + 1);
  while (at !== -1) {
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return at + 1;
    at = bytes.indexOf(QUOTE, at + 1);
  }
  return undefined;
}
