import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  closingQuote,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from './json-array.js';

/**
 * The number literals of a JSON object's own keys, as written: `{"price": 12345678901234567.89}` gives
 * price -> "12345678901234567.89", which JSON.parse would round through a binary double. Keys of nested
 * objects and arrays are not the object's own and are skipped. `text` must already be known to parse as
 * JSON; anything but an object gives an empty map. A key written twice keeps its last value, as in
 * JSON.parse.
 */
export function topLevelNumberLiterals(text: string): Map<string, string> {
  const literals = new Map<string, string>();
  let depth = 0;
  let expectingKey = false;
  let key: string | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = closingQuote(text, i);
      if (depth === 1 && expectingKey) key = keyText(text, i, close);
      expectingKey = false;
      i = close;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
      expectingKey = depth === 1 && c === OPEN_BRACE;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
    } else if (c === COMMA && depth === 1) {
      expectingKey = true;
    } else if (c === COLON && depth === 1 && key !== undefined) {
      NUMBER_AFTER_COLON.lastIndex = i + 1;
      const literal = NUMBER_AFTER_COLON.exec(text)?.[1];
      if (literal !== undefined) literals.set(key, literal);
      key = undefined;
    }
  }
  return literals;
}

const NUMBER_AFTER_COLON = /\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/y;

/** The key between the quotes at `open` and `close`; keys rarely hold escapes, so parse only those that do. */
function keyText(text: string, open: number, close: number): string {
  const inner = text.slice(open + 1, close);
  return inner.includes('\\') ? (JSON.parse(text.slice(open, close + 1)) as string) : inner;
}
