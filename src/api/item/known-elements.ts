import type { StoredVersion } from '../../domain/unchanged-item.js';
import { exactElement, ITEM_LAYOUT, type ParsedElement } from './item-schema.js';
import { elementSources, objectSource } from './json-source.js';
import { sentElements } from './sent-text.js';

/** An element of a page as `SentIndex` is asked about it: its id and the hash of its text as sent. */
export interface SentElement {
  readonly id: string;
  readonly sent: number;
}

/** What a store knows of the texts its current versions were read from. */
export interface SentIndex {
  /**
   * For each of a page's elements, in order, the current version of its id when it was read from text
   * hashing as its `sent`: asked once per page.
   */
  versionsOf(elements: readonly SentElement[]): (StoredVersion | undefined)[];
}

/**
 * The elements of a listing body (`json` is JSON.parse's array of `text`), each with the hash of its
 * text as sent. One whose text the store has read before is marked `unchanged` and read no
 * further: its exact numbers and unknown members are the stored version's. Undefined when the text's
 * elements cannot be delimited. The reference is `readListingBody` without an index, which it agrees
 * with on every element it reads (test/api/known-elements.test.ts); an unchanged resync of 100,000
 * items went from 3.13x / 3.36x to 2.23x / 2.32x the baseline's CPU (README, Benchmark).
 */
export function knownElements(
  text: string,
  json: readonly unknown[],
  index: SentIndex,
): ParsedElement[] | undefined {
  const spans = sentElements(text);
  if (spans.length !== json.length) return undefined;
  const asked: SentElement[] = [];
  const at: number[] = [];
  for (const [i, { sent }] of spans.entries()) {
    const value = json[i];
    const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
    if (sent === undefined || typeof id !== 'string') continue;
    asked.push({ id, sent });
    at.push(i);
  }
  const versions: (StoredVersion | undefined)[] = spans.map(() => undefined);
  const found = asked.length > 0 ? index.versionsOf(asked) : [];
  for (const [k, version] of found.entries()) versions[at[k] as number] = version;
  // A page the store knows nothing of (a first sync's) is scanned in one pass, as without an index.
  const sources = versions.some((version) => version !== undefined)
    ? undefined
    : elementSources(text, ITEM_LAYOUT, json);
  return spans.map(({ start, sent }, i): ParsedElement => {
    const value = json[i];
    const unchanged = versions[i];
    if (unchanged !== undefined) return { json: value, raw: '', sent, unchanged };
    const source = sources?.[i] ?? objectSource(text, ITEM_LAYOUT, value, start);
    const { raw } = exactElement(value, source);
    return sent === undefined ? { json: value, raw } : { json: value, raw, sent };
  });
}
