import {
  BACKSLASH,
  CLOSE_BRACE,
  COLON,
  COMMA,
  containerEnd,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  skipSpace,
  stringEnd,
} from './json-bytes.js';
import type { ObjectLayout, ObjectSource } from './json-source.js';

/**
 * An object's `ObjectSource` (json-source.ts) read from its bytes by the scan that delimits it in a
 * listing body (`sentElements` with a layout): a first sync then scans each body once, where it scanned
 * the bytes for the elements and then each element's text again for its numbers and unknown members.
 * The scan cannot tell a key written twice (JSON.parse keeps its last value), so the source says how
 * many members it read (`ScannedShape`): it stands for the text's source only when JSON.parse's object
 * has as many keys (`fitsParsed`), and `objectSource` over the text reads it otherwise. The reference is
 * `objectSource` (test/api/item/known-elements.test.ts, fast-check: generated, broken and duplicated-key
 * bodies).
 */

/** How many members an object was written with, and those of the objects nested by its layout. */
export interface ScannedShape {
  readonly members: number;
  readonly nested: readonly (readonly [key: string, shape: ScannedShape])[];
}

export type ScannedSource = ObjectSource & ScannedShape;

/** Whether JSON.parse's value `json` holds every member `shape` counted: no key was written twice. */
export function fitsParsed(json: unknown, shape: ScannedShape): boolean {
  if (typeof json !== 'object' || json === null) return false;
  if (Object.keys(json).length !== shape.members) return false;
  for (const [key, inner] of shape.nested) {
    if (!fitsParsed((json as Record<string, unknown>)[key], inner)) return false;
  }
  return true;
}

/** A known key as the scan looks it up: by a hash of its bytes (`keyHash`), then compared. */
interface KnownKey {
  readonly name: string;
  readonly hash: number;
  readonly exact: boolean;
  readonly nested: KeyTable | undefined;
}

/** A layout's known keys in an open-addressed table of a power of two slots, at least twice as many. */
class KeyTable {
  private readonly slots: (KnownKey | undefined)[];
  private readonly mask: number;

  constructor(layout: ObjectLayout) {
    let size = 8;
    while (size < 2 * layout.known.size) size *= 2;
    this.slots = new Array(size).fill(undefined);
    this.mask = size - 1;
    for (const name of layout.known) {
      const codes = Array.from(name, (c) => c.charCodeAt(0));
      // The scan compares a key's bytes with its name's characters: one outside ASCII would never match.
      if (codes.some((c) => c >= 0x80)) throw new Error(`layout key ${name} cannot be scanned from bytes`);
      const nested = layout.nested.get(name);
      const hash = keyHash(codes);
      let at = hash & this.mask;
      while (this.slots[at] !== undefined) at = (at + 1) & this.mask;
      this.slots[at] = { name, hash, exact: layout.exact.has(name), nested: nested && tableOf(nested) };
    }
  }

  /** The known key quoted from `open` to just before `end` in `bytes`, whose hash is `hash`. */
  get(bytes: Uint8Array, open: number, end: number, hash: number): KnownKey | undefined {
    for (let at = hash & this.mask; ; at = (at + 1) & this.mask) {
      const key = this.slots[at];
      if (key === undefined || (key.hash === hash && spells(bytes, open, end, key.name))) return key;
    }
  }
}

const keyTables = new WeakMap<ObjectLayout, KeyTable>();

function tableOf(layout: ObjectLayout): KeyTable {
  let table = keyTables.get(layout);
  if (table === undefined) {
    table = new KeyTable(layout);
    keyTables.set(layout, table);
  }
  return table;
}

function keyHash(codes: readonly number[]): number {
  let hash = 0;
  for (const c of codes) hash = (Math.imul(hash, 31) + c) | 0;
  return hash;
}

/** Why the scan gives up: the bytes are not plainly JSON, or a key holds an escape. */
const GIVE_UP = -1;

/**
 * Scans the object at `open` in `bytes` (which `buffer` views) by `layout`: its source, and `end` just
 * past it; undefined where the scan gives up (the caller then delimits the object by `containerEnd`,
 * which agrees with `end` wherever the scan does not give up).
 */
export class ByteSourceScanner {
  /** Just past the object scanned last. */
  end = 0;
  private at = 0;
  /** The hash (`keyHash`) of the key read last by `keyEnd`. */
  private hash = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly buffer: Buffer,
  ) {}

  scan(open: number, layout: ObjectLayout): ScannedSource | undefined {
    this.at = open;
    const source = this.object(tableOf(layout));
    this.end = this.at;
    return source;
  }

  private object(table: KeyTable): ScannedSource | undefined {
    const bytes = this.bytes;
    const unknown = new UnknownMembers(bytes, this.buffer);
    const nested: [string, ScannedShape][] = [];
    let numbers: Map<string, string> | undefined;
    let members = 0;
    let at = skipSpace(bytes, this.at + 1);
    while (bytes[at] !== CLOSE_BRACE || members > 0) {
      if (bytes[at] !== QUOTE) return undefined;
      const keyOpen = at;
      const keyEnd = this.keyEnd(keyOpen);
      if (keyEnd === GIVE_UP) return undefined;
      const key = table.get(bytes, keyOpen, keyEnd, this.hash);
      members += 1;
      at = skipSpace(bytes, keyEnd);
      if (bytes[at] !== COLON) return undefined;
      const valueAt = skipSpace(bytes, at + 1);
      if (key?.nested !== undefined && bytes[valueAt] === OPEN_BRACE) {
        this.at = valueAt;
        const inner = this.object(key.nested);
        if (inner === undefined) return undefined;
        nested.push([key.name, inner]);
        if (inner.unknown !== '{}') unknown.add(`${this.latin1(keyOpen, keyEnd)}:${inner.unknown}`);
        at = this.at;
      } else {
        at = this.valueEnd(valueAt);
        if (at === GIVE_UP) return undefined;
        if (key === undefined) unknown.member(keyOpen, at);
        else if (key.exact && isNumberStart(bytes[valueAt]))
          numbers = withNumber(numbers, key.name, this.latin1(valueAt, at));
      }
      at = skipSpace(bytes, at);
      if (bytes[at] === CLOSE_BRACE) break;
      if (bytes[at] !== COMMA) return undefined;
      at = skipSpace(bytes, at + 1);
    }
    this.at = at + 1;
    return { numbers, unknown: unknown.text(), members, nested };
  }

  /** Just past the key quoted from `open`, hashing it on the way; GIVE_UP at an escape or the end. */
  private keyEnd(open: number): number {
    const bytes = this.bytes;
    let hash = 0;
    for (let at = open + 1; at < bytes.length; at += 1) {
      const c = bytes[at] as number;
      if (c === QUOTE) {
        this.hash = hash;
        return at + 1;
      }
      if (c === BACKSLASH) return GIVE_UP;
      hash = (Math.imul(hash, 31) + c) | 0;
    }
    return GIVE_UP;
  }

  /** Just past the value at `start`: a string, a container, or a literal of the characters literals
   * are written with (anything else is not plainly JSON: GIVE_UP, as at the end of the bytes). */
  private valueEnd(start: number): number {
    const bytes = this.bytes;
    const first = bytes[start];
    const end =
      first === QUOTE
        ? stringEnd(bytes, start)
        : first === OPEN_BRACE || first === OPEN_BRACKET
          ? containerEnd(bytes, start)
          : literalEnd(bytes, start);
    return end === undefined ? GIVE_UP : end;
  }

  /** Bytes known to be ASCII as text. */
  private latin1(start: number, end: number): string {
    return this.buffer.toString('latin1', start, end);
  }
}

function withNumber(numbers: Map<string, string> | undefined, key: string, literal: string) {
  const map = numbers ?? new Map<string, string>();
  map.set(key, literal);
  return map;
}

/**
 * The members of an object that its layout does not know, as `ObjectSource.unknown` holds them: each as
 * written, joined by commas. Those written one after another with a bare comma between them are
 * decoded as one text.
 */
class UnknownMembers {
  private readonly pieces: string[] = [];
  private start = GIVE_UP;
  private end = GIVE_UP;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly buffer: Buffer,
  ) {}

  /** The member written from `start` to `end`. */
  member(start: number, end: number): void {
    if (this.start !== GIVE_UP && start === this.end + 1 && this.bytes[this.end] === COMMA) {
      this.end = end;
      return;
    }
    this.flush();
    this.start = start;
    this.end = end;
  }

  /** A member as text. */
  add(text: string): void {
    this.flush();
    this.pieces.push(text);
  }

  text(): string {
    this.flush();
    return this.pieces.length === 0 ? '{}' : `{${this.pieces.join(',')}}`;
  }

  private flush(): void {
    if (this.start === GIVE_UP) return;
    this.pieces.push(this.buffer.toString('utf8', this.start, this.end));
    this.start = GIVE_UP;
  }
}

/** Just past the literal (number, true, false, null) at `start`, written with `[0-9a-zA-Z+-.]` only. */
function literalEnd(bytes: Uint8Array, start: number): number | undefined {
  let at = start;
  while (at < bytes.length && isLiteralByte(bytes[at] as number)) at += 1;
  return at > start ? at : undefined;
}

function isLiteralByte(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) ||
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a) ||
    c === 0x2b ||
    c === 0x2d ||
    c === 0x2e
  );
}

/** A number's first character, as `objectSource` tells a number from the other values. */
const isNumberStart = (c: number | undefined) => c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39);

/** Whether the key quoted from `open` to just before `end` is `name` (which is ASCII). */
function spells(bytes: Uint8Array, open: number, end: number, name: string): boolean {
  if (end - open - 2 !== name.length) return false;
  for (let k = 0; k < name.length; k += 1) if (bytes[open + 1 + k] !== name.charCodeAt(k)) return false;
  return true;
}
