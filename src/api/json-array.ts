/**
 * The source text of each element of a JSON array, so that an item's `raw` is exactly what the server
 * sent (`12.50` stays `12.50`). `text` must already be known to parse as a JSON array.
 */
export function arrayElementTexts(text: string): string[] {
  const elements: string[] = [];
  let depth = 0;
  let start = -1;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      depth += 1;
      if (depth === 1) start = i + 1;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      if (depth === 1) pushElement(elements, text, start, i);
      depth -= 1;
    } else if (c === COMMA && depth === 1) {
      pushElement(elements, text, start, i);
      start = i + 1;
    }
  }
  return elements;
}

/** Character codes of JSON's structural characters, shared with the other scanner of JSON text. */
export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;

function pushElement(elements: string[], text: string, start: number, end: number): void {
  const element = text.slice(start, end).trim();
  if (element !== '') elements.push(element);
}

/** Index of the quote that closes the string opened at `open`. */
export function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return text.length;
}
