import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactElement, ITEM_LAYOUT } from '../../../src/api/item/item-schema.js';
import { elementSources } from '../../../src/api/item/json-source.js';
import { knownElements, type SentIndex } from '../../../src/api/item/known-elements.js';
import { sentElements } from '../../../src/api/item/sent-text.js';

/** A listing element of the usual shape, with members in any order, unknown ones and exact numbers. */
const element = fc
  .record({
    id: fc.string({ minLength: 1, maxLength: 8 }),
    title: fc.string({ maxLength: 30 }),
    price: fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.constant('12.50'), fc.constant(12.5)),
    quantity: fc.oneof(fc.integer(), fc.constant('3')),
    shop: fc.record({
      id: fc.string({ maxLength: 4 }),
      name: fc.string({ maxLength: 8 }),
      rating: fc.jsonValue(),
    }),
    views: fc.jsonValue(),
  })
  .chain((value) =>
    fc.shuffledSubarray(Object.keys(value), { minLength: 1 }).map((keys) => [value, keys] as const),
  )
  .map(([value, keys]) => Object.fromEntries(keys.map((key) => [key, value[key as keyof typeof value]])));

const layouts = [undefined, 1, '\t'] as const;
const body = (elements: readonly unknown[], space: (typeof layouts)[number]) =>
  JSON.stringify(elements, null, space);

/** The reference: what the listing body reader gives for each element without an index. */
function referenceElements(text: string) {
  const json = JSON.parse(text) as unknown[];
  return elementSources(text, ITEM_LAYOUT, json).map((source, i) => exactElement(json[i], source));
}

/** An index that knows the texts of `text`'s elements, each as version `i` of hash `1000 + i`. */
function indexOf(text: string): SentIndex {
  const json = JSON.parse(text) as { id?: unknown }[];
  const known = new Map<string, { sent: number; hash: number; version: number }>();
  for (const [i, { sent }] of sentElements(text).entries()) {
    const id = json[i]?.id;
    if (sent !== undefined && typeof id === 'string') known.set(id, { sent, hash: 1000 + i, version: i });
  }
  return {
    versionsOf: (elements) =>
      elements.map(({ id, sent }) => {
        const stored = known.get(id);
        return stored?.sent === sent ? { hash: stored.hash, version: stored.version } : undefined;
      }),
  };
}

describe('sentElements', () => {
  it('delimits exactly the elements JSON.parse reads, however the array is laid out', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), fc.constantFrom(...layouts), (values, space) => {
        const text = body(values, space);
        const parsed = JSON.parse(text) as unknown[];
        const spans = sentElements(text);
        expect(spans.map(({ start, end }) => JSON.parse(text.slice(start, end)))).toEqual(parsed);
        for (const [i, { sent, start, end }] of spans.entries()) {
          const isObject = typeof parsed[i] === 'object' && parsed[i] !== null && !Array.isArray(parsed[i]);
          const plain = !/\ufffd|\\u[dD][89a-fA-F]/.test(text.slice(start, end));
          expect(sent !== undefined).toBe(isObject && plain);
        }
      }),
    );
  });

  it('hashes an element by its own text alone, and tells a changed character', () => {
    fc.assert(
      fc.property(element, element, fc.constantFrom(...layouts), fc.nat(), (a, b, space, at) => {
        const [first] = sentElements(body([a, b], space));
        const [, second] = sentElements(body([b, a], space));
        expect(first?.sent).toBe(second?.sent);
        const text = JSON.stringify(a);
        // A digit or letter of the text turned into another: the same length, one character apart.
        const where = [...text.matchAll(/[0-9a-z]/g)].map((match) => match.index);
        fc.pre(where.length > 0);
        const k = where[at % where.length] as number;
        const changed = `${text.slice(0, k)}${text[k] === 'q' ? 'r' : 'q'}${text.slice(k + 1)}`;
        expect(sentElements(`[${changed}]`)[0]?.sent).not.toBe(sentElements(`[${text}]`)[0]?.sent);
      }),
    );
  });
});

describe('knownElements', () => {
  it('reads every element as the reference does when the store knows none of them', () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 8 }), fc.constantFrom(...layouts), (elements, space) => {
        const text = body(elements, space);
        const read = knownElements(text, JSON.parse(text), {
          versionsOf: (elements) => elements.map(() => undefined),
        });
        expect(read?.map(({ json, raw }) => ({ json, raw }))).toEqual(referenceElements(text));
        expect(read?.every((e) => e.sent !== undefined && e.unchanged === undefined)).toBe(true);
      }),
    );
  });

  it('knows unchanged exactly the elements sent as the same text, and reads the others as the reference does', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(element, { selector: (e) => e.id, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        fc.constantFrom(...layouts),
        (elements, edits, space) => {
          const before = body(elements, space);
          // Edited elements change a value, or only how one is written (12.5 as "12.50").
          const after = body(
            elements.map((e, i) => (edits[i] ? { ...e, price: e.price === 12.5 ? '12.50' : 12.5 } : e)),
            space,
          );
          const read = knownElements(after, JSON.parse(after), indexOf(before)) ?? [];
          const reference = referenceElements(after);
          const hashable = sentElements(before).map(({ sent }) => sent !== undefined);
          for (const [i, e] of read.entries()) {
            const same = JSON.stringify(elements[i]) === JSON.stringify(JSON.parse(after)[i]);
            const known = same && hashable[i] && typeof elements[i]?.id === 'string';
            expect(e.unchanged).toEqual(known ? { hash: 1000 + i, version: i } : undefined);
            if (e.unchanged === undefined) expect({ json: e.json, raw: e.raw }).toEqual(reference[i]);
          }
        },
      ),
    );
  });
});
