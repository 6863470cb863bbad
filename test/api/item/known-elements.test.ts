import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReceivedResponse } from '../../../src/api/http/response.js';
import { fitsParsed } from '../../../src/api/item/byte-source.js';
import { ITEM_LAYOUT, normaliseElement, type ParsedElement } from '../../../src/api/item/item-schema.js';
import { objectSource } from '../../../src/api/item/json-source.js';
import { knownElements, type SentIndex } from '../../../src/api/item/known-elements.js';
import { type SentHints, sentElements, sentElementsAgainst } from '../../../src/api/item/sent-text.js';
import { readListingBody } from '../../../src/api/listing/page-body.js';
import type { StoredVersion, VouchedBody } from '../../../src/domain/unchanged-item.js';

/**
 * The element reader (`sentElements`, then `knownElements`) against the reference, the body parsed in
 * full (`readListingBody` without an index), on bodies written as text by hand: escapes, Unicode and
 * lone surrogates, nesting, keys written twice, whitespace anywhere, numbers JSON.parse rounds, a byte
 * order mark; and the same bodies broken.
 */

const space = fc.constantFrom('', '', ' ', '\n', '\t', '\r\n  ');
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const stringText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }).map((s) => JSON.stringify(s)),
  fc.string({ unit: anyCodeUnit, maxLength: 4 }).map((s) => JSON.stringify(s)),
  fc.constantFrom(
    '"\\u00e9\\/\\"\\\\ \\b"',
    '"\\ud83d\\ude00"',
    '"\\ud800"',
    '"\\\\ud800"',
    '"\ufffd"',
    '"Ünïcødé & Co"',
    '"\\u005c"',
    '""',
  ),
);
const numberText = fc.oneof(
  fc.constantFrom('0', '-0', '12.50', '12.5', '1e400', '-1E-7', '1.0e+2', '0.30000000000000004'),
  fc.constantFrom('12345678901234567890', '123456789012345678901234567890.25', '3', '-3'),
  fc.integer().map(String),
);
const key = fc.oneof(
  fc.constantFrom('id', 'title', 'price', 'original_price', 'quantity', 'published', 'shop', 'name'),
  fc.constantFrom('"id"', '__proto__', 'views', '0', '1', 'ids', 'url'),
  fc.string({ maxLength: 3 }),
);

/** JSON text of any value, laid out with whitespace anywhere JSON allows it. */
const { value: valueText } = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    stringText,
    fc.constantFrom('true', 'false', 'null'),
    tie('array'),
    tie('object'),
  ),
  array: fc
    .tuple(fc.array(fc.tuple(space, tie('value'), space), { maxLength: 3 }), space)
    .map(([items, inner]) => `[${inner}${items.map((item) => item.join('')).join(',')}]`),
  object: members(tie('value')),
}));

function members(value: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(fc.array(fc.tuple(space, key, space, space, value, space), { maxLength: 6 }), space)
    .map(
      ([entries, inner]) =>
        `{${inner}${entries.map(([a, k, b, c, v, d]) => `${a}${JSON.stringify(k)}${b}:${c}${v}${d}`).join(',')}}`,
    );
}

/** An item as a server may write it: an id (text, number, or none), the fields read, others. */
const itemText = fc
  .record({
    id: fc.oneof(
      fc.string({ minLength: 1, maxLength: 5 }).map((s) => JSON.stringify(s)),
      fc.constantFrom('"\\u0061b"', '7', '12345678901234567890', '""'),
    ),
    rest: members(valueText),
    price: numberText,
    quantity: fc.oneof(numberText, fc.constant('"3"')),
    shop: members(valueText),
    first: space,
  })
  .map(
    ({ id, rest, price, quantity, shop, first }) =>
      `{${first}"id":${id},"price":${price},"quantity":${quantity},"shop":${shop},"title":"a \\"b\\"","x":${rest}}`,
  );

const elementText = fc.oneof({ weight: 6, arbitrary: itemText }, { weight: 1, arbitrary: valueText });

/** A listing body as text: an array of `elements`, whitespace anywhere, now and then a byte order mark. */
const bodyText = fc
  .tuple(fc.array(fc.tuple(space, elementText, space), { maxLength: 6 }), space, space, fc.boolean())
  .map(
    ([elements, before, after, bom]) =>
      `${bom ? '\ufeff' : ''}${before}[${elements.map((e) => e.join('')).join(',')}]${after}`,
  );

const response = (bytes: Uint8Array) => new ReceivedResponse(200, {}, bytes);
const context = { shown: 'GET /v1/sell/shop/items?page=1', mayEnd: true, secrets: [] };

/** The reference: every element of the body as the listing reader reads it without an index. */
const reference = (bytes: Uint8Array) => readListingBody(response(bytes), context).elements;

/** What becomes of an element: the item or the reason it is none. */
const itemOf = (element: ParsedElement) => normaliseElement(element, 1);

/**
 * A store that read the body `before`: each of its elements with an id and a hash is version `i`,
 * holding the item the reference reads from it.
 */
function storeOf(before: Uint8Array) {
  const spans = sentElements(before) ?? [];
  const read = reference(before);
  const versions = new Map<string, { sent: number; version: StoredVersion }>();
  const items = new Map<number, unknown>();
  const body: { ids: string[]; sent: number[]; versions: number[]; hashes: number[] } = {
    ids: [],
    sent: [],
    versions: [],
    hashes: [],
  };
  for (const [i, { sent }] of spans.entries()) {
    const id = (read[i]?.json as { id?: unknown } | null)?.id;
    if (sent === undefined || typeof id !== 'string') continue;
    const version = { version: i, hash: 1000 + i };
    versions.set(id, { sent, version });
    items.set(i, itemOf(read[i] as ParsedElement));
    body.ids.push(id);
    body.sent.push(sent);
    body.versions.push(i);
    body.hashes.push(1000 + i);
  }
  const asked: string[] = [];
  const index: SentIndex = {
    versionsOf: (elements) =>
      elements.map(({ id, sent }) => {
        asked.push(id);
        const stored = versions.get(id);
        return stored?.sent === sent ? stored.version : undefined;
      }),
  };
  return { index, items, asked, body: body as VouchedBody };
}

/** What each element of `elements` reads as, an element known unchanged as its version's item. */
const itemsRead = (elements: readonly ParsedElement[], items: ReadonlyMap<number, unknown>) =>
  elements.map((element) => (element.unchanged ? items.get(element.unchanged.version) : itemOf(element)));

/** A changed answer of the page of `before`: some elements edited, dropped, added or moved. */
const edits = fc.array(fc.tuple(fc.nat(), fc.constantFrom('edit', 'drop', 'add', 'move'), elementText), {
  maxLength: 4,
});

function edited(elements: readonly string[], changes: readonly [number, string, string][]): string[] {
  const after = [...elements];
  for (const [at, change, text] of changes) {
    const k = after.length === 0 ? 0 : at % after.length;
    if (change === 'edit' && after.length > 0) after[k] = text;
    else if (change === 'drop') after.splice(k, 1);
    else if (change === 'add') after.splice(k, 0, text);
    else after.push(...after.splice(k, 1));
  }
  return after;
}

const bytesOf = (text: string) => Buffer.from(text);

describe('sentElements', () => {
  it('delimits exactly the elements JSON.parse reads, in the bytes, however the array is written', () => {
    fc.assert(
      fc.property(bodyText, (text) => {
        const bytes = bytesOf(text);
        const parsed = JSON.parse(text.replace(/^\ufeff/, '')) as unknown[];
        const spans = sentElements(bytes);
        expect(spans?.map(({ start, end }) => JSON.parse(bytes.toString('utf8', start, end)))).toEqual(
          parsed,
        );
        for (const [i, { sent, start, end }] of (spans ?? []).entries()) {
          const isObject = typeof parsed[i] === 'object' && parsed[i] !== null && !Array.isArray(parsed[i]);
          const plain = !/\ufffd|\\u[dD][89a-fA-F]/.test(bytes.toString('utf8', start, end));
          expect(sent !== undefined).toBe(isObject && plain);
        }
      }),
    );
  });

  it('hashes an element by its own bytes alone, and tells a changed byte', () => {
    fc.assert(
      fc.property(itemText, itemText, space, fc.nat(), (a, b, gap, at) => {
        const [first] = sentElements(bytesOf(`[${a},${gap}${b}]`)) ?? [];
        const [, second] = sentElements(bytesOf(`[${gap}${b} ,${a}]`)) ?? [];
        expect(first?.sent).toBe(second?.sent);
        fc.pre(first?.sent !== undefined);
        const where = [...a.matchAll(/[0-9a-z]/g)].map((match) => match.index);
        fc.pre(where.length > 0);
        const k = where[at % where.length] as number;
        const changed = `${a.slice(0, k)}${a[k] === 'q' ? 'r' : 'q'}${a.slice(k + 1)}`;
        expect(sentElements(bytesOf(`[${changed}]`))?.[0]?.sent).not.toBe(first?.sent);
      }),
    );
  });
});

/** The hints a body's own elements give (an element with no hash gives a number no hash is likely to be). */
function hintsOf(bytes: Uint8Array): SentHints {
  const spans = sentElements(bytes) ?? [];
  return { sent: spans.map(({ sent }) => sent ?? -1), lengths: spans.map(({ start, end }) => end - start) };
}

/** A body broken at one byte: cut there, that byte dropped, or `byte` inserted before it. */
const breakage = fc.tuple(
  fc.nat(),
  fc.constantFrom('cut', 'drop', 'insert'),
  fc.constantFrom(0x2c, 0x5d, 0x7d, 0x7b, 0x22, 0x5c, 0x20, 0x80, 0xff, 0xc3, 0x31),
);

function broken(whole: Buffer, [at, how, byte]: [number, string, number]): Buffer {
  const k = whole.length === 0 ? 0 : at % whole.length;
  if (how === 'cut') return whole.subarray(0, k);
  if (how === 'drop') return Buffer.concat([whole.subarray(0, k), whole.subarray(k + 1)]);
  return Buffer.concat([whole.subarray(0, k), Buffer.from([byte]), whole.subarray(k)]);
}

describe('sentElements with a layout, the scan that also reads what JSON.parse loses', () => {
  it('delimits and hashes as without one, and reads the source objectSource reads wherever it fits the parse', () => {
    let read = 0;
    fc.assert(
      fc.property(bodyText, fc.option(breakage, { freq: 4 }), (text, breaking) => {
        const whole = bytesOf(text);
        const bytes = breaking === null ? whole : broken(whole, breaking);
        const scanned = sentElements(bytes, ITEM_LAYOUT);
        expect(scanned?.map(({ start, end, sent }) => ({ start, end, sent }))).toEqual(sentElements(bytes));
        for (const { start, end, sent, source } of scanned ?? []) {
          if (source === undefined) continue;
          expect(sent).toBeDefined();
          const elementText = bytes.toString('utf8', start, end);
          const json = (() => {
            try {
              return JSON.parse(elementText) as unknown;
            } catch {
              return undefined;
            }
          })();
          if (json === undefined || !fitsParsed(json, source)) continue;
          read += 1;
          const { numbers, unknown } = source;
          expect({ numbers, unknown }).toEqual(objectSource(elementText, ITEM_LAYOUT, json));
        }
      }),
    );
    // Not vacuous: most generated items are read by the scan.
    expect(read).toBeGreaterThan(50);
  });

  it('tells a key written twice, which the scan cannot read as JSON.parse does', () => {
    const text = '[{"id":"a","x":1,"price":1.50,"x":2,"shop":{"id":"s","k":1,"k":2},"price":"3"}]';
    const [element] = sentElements(bytesOf(text), ITEM_LAYOUT) ?? [];
    const json = JSON.parse(text)[0];
    expect(element?.source && fitsParsed(json, element.source)).toBe(false);
    const once = '[{"id":"a","x":1,"price":1.50,"shop":{"id":"s","k":1}}]';
    const [single] = sentElements(bytesOf(once), ITEM_LAYOUT) ?? [];
    const parsed = JSON.parse(once)[0];
    expect(single?.source && fitsParsed(parsed, single.source)).toBe(true);
    expect(single?.source?.unknown).toBe('{"x":1,"shop":{"k":1}}');
    expect(single?.source?.numbers).toEqual(new Map([['price', '1.50']]));
  });
});

describe('sentElementsAgainst, the elements delimited with the help of the page before', () => {
  it("delimits and hashes a changed answer exactly as sentElements does, with the page before's elements as hints", () => {
    fc.assert(
      fc.property(
        fc.array(elementText, { maxLength: 6 }),
        edits,
        space,
        fc.option(breakage, { freq: 3 }),
        (elements, changes, gap, breaking) => {
          const before = bytesOf(`[${elements.join(',')}]`);
          const whole = bytesOf(`[${gap}${edited(elements, changes).join(`,${gap}`)}]`);
          const after = breaking === null ? whole : broken(whole, breaking);
          expect(sentElementsAgainst(after, hintsOf(before))).toEqual(sentElements(after));
          // With a layout, an element scanned rather than recognised carries the source the scan reads.
          const scanned = sentElements(after, ITEM_LAYOUT);
          for (const [i, element] of (
            sentElementsAgainst(after, hintsOf(before), ITEM_LAYOUT) ?? []
          ).entries())
            if (element.source !== undefined) expect(element).toEqual(scanned?.[i]);
        },
      ),
    );
  });

  it('delimits a body exactly as sentElements does whatever the hints say', () => {
    const hint = fc.tuple(fc.oneof(fc.integer(), fc.nat(2 ** 53 - 1)), fc.integer({ min: -2, max: 40 }));
    fc.assert(
      fc.property(bodyText, fc.array(hint, { maxLength: 8 }), fc.boolean(), (text, junk, mixed) => {
        const bytes = bytesOf(text);
        const own = hintsOf(bytes);
        // Junk alone, or the body's own hints with junk spliced in among them.
        const pairs = mixed
          ? own.sent.flatMap((sent, i) => [
              [sent, own.lengths[i] as number] as const,
              ...junk.slice(i, i + 1),
            ])
          : junk;
        const hints = { sent: pairs.map(([sent]) => sent), lengths: pairs.map(([, length]) => length) };
        expect(sentElementsAgainst(bytes, hints)).toEqual(sentElements(bytes));
      }),
    );
  });
});

describe('a listing body read element by element', () => {
  it('reads every element as the full parse does when the store knows none of them', () => {
    fc.assert(
      fc.property(bodyText, fc.boolean(), (text, withSources) => {
        const bytes = bytesOf(text);
        const { index } = storeOf(bytesOf('[]'));
        const read = knownElements(
          bytes,
          sentElements(bytes, withSources ? ITEM_LAYOUT : undefined) ?? [],
          index,
        );
        expect(read?.map(({ json, raw }) => ({ json, raw }))).toEqual(
          reference(bytes).map(({ json, raw }) => ({ json, raw })),
        );
      }),
    );
  });

  it('gives the items of the full parse for a changed answer, reading only the elements whose bytes the page had not', () => {
    fc.assert(
      fc.property(
        fc.array(elementText, { maxLength: 6 }),
        edits,
        fc.boolean(),
        (elements, changes, withSources) => {
          const before = bytesOf(`[${elements.join(',')}]`);
          const afterElements = edited(elements, changes);
          const after = bytesOf(`[\n${afterElements.join(',\n')}\n]`);
          const { index, items, asked, body } = storeOf(before);
          const layout = withSources ? ITEM_LAYOUT : undefined;
          const spans = sentElementsAgainst(after, hintsOf(before), layout) ?? [];
          const read = knownElements(after, spans, index, body) ?? [];
          expect(itemsRead(read, items)).toEqual(reference(after).map(itemOf));
          // The elements the page had, byte for byte, are not parsed, and nothing is looked up.
          const recorded = new Set(body.sent);
          expect(asked).toEqual([]);
          for (const [i, { sent }] of (sentElements(after) ?? []).entries()) {
            if (sent !== undefined && recorded.has(sent)) expect(read[i]?.raw).toBe('');
          }
          // With no previous reading, the store is asked about each element instead: the same items.
          const viaIndex = knownElements(after, sentElements(after, layout) ?? [], index) ?? [];
          expect(itemsRead(viaIndex, items)).toEqual(reference(after).map(itemOf));
        },
      ),
    );
  });

  it('fails, or reads, exactly as the full parse does whatever is broken in a body', () => {
    fc.assert(
      fc.property(bodyText, breakage, (text, breaking) => {
        const brokenBody = broken(bytesOf(text), breaking);
        const { index } = storeOf(bytesOf('[]'));
        const outcome = (read: () => readonly ParsedElement[]) => {
          try {
            return read().map(({ json, raw }) => ({ json, raw }));
          } catch (error) {
            return `${(error as Error).constructor.name}: ${(error as Error).message}`;
          }
        };
        expect(
          outcome(() => readListingBody(response(brokenBody), { ...context, known: index }).elements),
        ).toEqual(outcome(() => reference(brokenBody)));
      }),
    );
  });
});
