/**
 * What JSON.parse loses of an object, read from its source text: the literal text of chosen members
 * sent as numbers (`{"price": 12345678901234567.89}` would round through a binary double), and the
 * members nobody reads, verbatim (a big integer among them stays whole). `text` must already be known
 * to parse as JSON: the scanner trusts its structure and checks nothing.
 *
 * Kept for exactness, not speed: Node 20's JSON.parse gives a reviver no source text, and prices of up
 * to 40 digits and unknown members as written (`Item.raw`) need it. It costs CPU within noise: with
 * `raw` rebuilt from JSON.parse's values instead, a first sync of 100,000 items took 4.44 s of CPU
 * against 4.55 s, an unchanged one 2.94 s against 2.93 s (`node dist/bench/run.js --items 100000
 * --latencies 0`, 2 runs each).
 * test/api/item/json-source.test.ts checks it against JSON.parse on generated arrays and objects (fast-check).
 * A listing body read in full has its objects' sources read from its bytes by the scan that delimits
 * them (`byte-source.ts`), with this scanner as its reference and for what that scan cannot tell.
 */

/** Which members of an object are read, and so which are kept as sent. */
export interface ObjectLayout {
  /** Keys whose values are read: they are left out of `ObjectSource.unknown`. */
  readonly known: ReadonlySet<string>;
  /** Known keys whose values, when JSON numbers, are wanted as their literal text. */
  readonly exact: ReadonlySet<string>;
  /** Known keys holding an object whose own members are sorted in turn, by that object's layout. */
  readonly nested: ReadonlyMap<string, ObjectLayout>;
}

export interface ObjectSource {
  /** The literal text of each `exact` member sent as a JSON number. */
  readonly numbers: ReadonlyMap<string, string> | undefined;
  /** The members that are not `known` (a nested object's with only its own such members), as a JSON
   * object text with each member as written: '{}' when there are none. */
  readonly unknown: string;
}

/**
 * The source of each element of the JSON array `text`, in order; an element that is not an object has
 * none. `elements` are JSON.parse's values of them, whose keys spare the scanner a copy of each key.
 */
export function elementSources(
  text: string,
  layout: ObjectLayout,
  elements: readonly unknown[],
): ObjectSource[] {
  const scanner = new SourceScanner(text);
  const sources: ObjectSource[] = [];
  if (scanner.next() !== OPEN_BRACKET) return sources;
  scanner.at += 1;
  while (scanner.next() !== CLOSE_BRACKET && scanner.at < text.length) {
    sources.push(scanner.value(layout, elements[sources.length]));
    if (scanner.next() === COMMA) scanner.at += 1;
  }
  return sources;
}

/** The source of the JSON object at `at` in `text` (none if it is not an object), whose JSON.parse
 * value is `json`. */
export function objectSource(text: string, layout: ObjectLayout, json: unknown, at = 0): ObjectSource {
  const scanner = new SourceScanner(text);
  scanner.at = at;
  scanner.next();
  return scanner.value(layout, json);
}

const NO_SOURCE: ObjectSource = Object.freeze({ numbers: undefined, unknown: '{}' });

/** Character codes of JSON's structural characters. */
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** A reading position in `text`; each method leaves `at` just past what it read. */
class SourceScanner {
  at = 0;

  constructor(private readonly text: string) {}

  /** The code of the next character that is not whitespace, moving `at` to it (NaN at the end). */
  next(): number {
    const text = this.text;
    let at = this.at;
    let c = text.charCodeAt(at);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++at);
    this.at = at;
    return c;
  }

  /** The source of the value at `at` (no whitespace before it), whose JSON.parse value is `json`. */
  value(layout: ObjectLayout, json: unknown): ObjectSource {
    if (this.text.charCodeAt(this.at) === OPEN_BRACE) return this.object(layout, json);
    this.skipValue();
    return NO_SOURCE;
  }

  private object(layout: ObjectLayout, json: unknown): ObjectSource {
    const text = this.text;
    const parsed = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
    // JSON.parse's keys name the members in order unless a key is written twice or is an array index
    // (those come first). A name is taken only where the text spells it, so that order is never trusted.
    const names = Object.keys(parsed);
    let numbers: Map<string, string> | undefined;
    let unknown: Map<string, string> | undefined;
    this.at += 1;
    for (let member = 0; this.next() === QUOTE; member += 1) {
      const keyOpen = this.at;
      const keyEnd = closingQuote(text, keyOpen) + 1;
      const name = names[member];
      const key =
        name !== undefined && spells(text, keyOpen, keyEnd, name) ? name : keyText(text, keyOpen, keyEnd);
      this.at = keyEnd;
      if (this.next() === COLON) this.at += 1;
      const valueAt = this.next();
      const nested = layout.nested.get(key);
      if (!layout.known.has(key)) {
        this.skipValue();
        unknown = withEntry(unknown, key, text.slice(keyOpen, this.at));
      } else if (nested !== undefined && valueAt === OPEN_BRACE) {
        // A key written twice keeps its last value, as in JSON.parse: so does what is kept of it.
        const inner = this.object(nested, parsed[key]).unknown;
        if (inner === NO_SOURCE.unknown) unknown?.delete(key);
        else unknown = withEntry(unknown, key, `${text.slice(keyOpen, keyEnd)}:${inner}`);
      } else {
        const start = this.at;
        this.skipValue();
        if (layout.exact.has(key)) {
          if (valueAt === MINUS || (valueAt >= DIGIT_0 && valueAt <= DIGIT_9))
            numbers = withEntry(numbers, key, text.slice(start, this.at));
          else numbers?.delete(key);
        }
      }
      if (this.next() === COMMA) this.at += 1;
    }
    this.at += 1;
    if (numbers === undefined && unknown === undefined) return NO_SOURCE;
    return { numbers, unknown: unknown === undefined ? '{}' : `{${[...unknown.values()].join(',')}}` };
  }

  /** Moves past the value at `at`: a string, an object or array, or a literal. */
  private skipValue(): void {
    const text = this.text;
    const c = text.charCodeAt(this.at);
    if (c === QUOTE) {
      this.at = closingQuote(text, this.at) + 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      this.at = containerEnd(text, this.at);
    } else {
      let at = this.at;
      while (at < text.length && !endsLiteral(text.charCodeAt(at))) at += 1;
      this.at = at;
    }
  }
}

/** `map` (a new one if none) with `key` set to `value`. */
function withEntry(map: Map<string, string> | undefined, key: string, value: string): Map<string, string> {
  const entries = map ?? new Map<string, string>();
  entries.set(key, value);
  return entries;
}

/** Whether `c` can follow a literal (number, true, false, null). */
function endsLiteral(c: number): boolean {
  return (
    c === COMMA ||
    c === CLOSE_BRACE ||
    c === CLOSE_BRACKET ||
    c === 0x20 ||
    c === 0x0a ||
    c === 0x0d ||
    c === 0x09
  );
}

/** Index just past the object or array whose opening bracket is at `open`. */
export function containerEnd(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
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

/** Whether the key quoted from `open` to just before `end` is `name`, written with no escape. */
function spells(text: string, open: number, end: number, name: string): boolean {
  if (end - open - 2 !== name.length) return false;
  for (let k = 0; k < name.length; k += 1) {
    const c = text.charCodeAt(open + 1 + k);
    if (c !== name.charCodeAt(k) || c === BACKSLASH) return false;
  }
  return true;
}

/** The key quoted from `open` to just before `end`; keys rarely hold escapes, so parse only those that do. */
function keyText(text: string, open: number, end: number): string {
  const inner = text.slice(open + 1, end - 1);
  return inner.includes('\\') ? (JSON.parse(text.slice(open, end)) as string) : inner;
}
