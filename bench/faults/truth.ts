import { TRACKED_FIELDS } from '../../src/domain/item.js';
import type { SimItem } from '../../src/simulator/index.js';

/** The simulator's catalogue at one moment, by id: what a snapshot taken then must hold. */
export type Truth = ReadonlyMap<string, SimItem>;

export function truthOf(items: readonly SimItem[]): Truth {
  return new Map(items.map((item) => [item.id, item]));
}

/** One line of a changes feed reduced to what must match: `updated 42 price|quantity`. */
export type ChangeKey = string;

export function changeKey(change: string, id: string, fields: readonly string[]): ChangeKey {
  return `${change} ${id} ${fields.join('|')}`;
}

/** The changes a correct changes feed holds between two moments of the catalogue. */
export function expectedChanges(before: Truth, after: Truth): Set<ChangeKey> {
  const keys = new Set<ChangeKey>();
  for (const [id, item] of after) {
    const old = before.get(id);
    if (!old) keys.add(changeKey('added', id, []));
    else {
      const fields = changedFields(old, item);
      if (fields.length > 0) keys.add(changeKey('updated', id, fields));
    }
  }
  for (const id of before.keys()) if (!after.has(id)) keys.add(changeKey('removed', id, []));
  return keys;
}

/** Tracked fields whose values differ, in TRACKED_FIELDS order (as feeds list them). */
export function changedFields(before: SimItem, after: SimItem): string[] {
  return TRACKED_FIELDS.filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
}

/** Differences between two sets of change keys, as sentences for a report. */
export function compareChanges(expected: Set<ChangeKey>, found: Set<ChangeKey>, where: string): string[] {
  const problems: string[] = [];
  for (const key of expected) if (!found.has(key)) problems.push(`${where} lacks the change "${key}"`);
  for (const key of found)
    if (!expected.has(key)) problems.push(`${where} has an unexpected change "${key}"`);
  return problems;
}

/**
 * Records of an RFC 4180 CSV text (quoted fields may hold commas, quotes and newlines), header
 * included. Written here rather than imported: the harness must not trust the code it checks.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || record.length > 0) records.push([...record, field]);
  return records;
}
