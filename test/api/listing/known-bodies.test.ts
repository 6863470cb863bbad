import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReceivedResponse } from '../../../src/api/http/response.js';
import type { SentIndex } from '../../../src/api/item/known-elements.js';
import { sentElements } from '../../../src/api/item/sent-text.js';
import { bodyDigest, type KnownBodies } from '../../../src/api/listing/known-bodies.js';
import { type ListingBodyContext, readListingBody } from '../../../src/api/listing/page-body.js';
import type { KnownBody, VouchedBody } from '../../../src/domain/unchanged-item.js';

/** Listing elements as a server may send them: items, and now and then something that is not one. */
const element = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      id: fc.string({ minLength: 1, maxLength: 6 }),
      title: fc.string(),
      price: fc.double({ noNaN: true }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ id: fc.integer(), title: fc.string() }) },
  { weight: 1, arbitrary: fc.record({ title: fc.constant('\ufffd'), id: fc.constant('x') }) },
  { weight: 1, arbitrary: fc.jsonValue() },
);
const layouts = [undefined, 1, '\t'] as const;
const bodyOf = (elements: readonly unknown[], space: (typeof layouts)[number]) =>
  Buffer.from(JSON.stringify(elements, null, space));
const response = (bytes: Uint8Array) => new ReceivedResponse(200, {}, bytes);

/** The store's versions as a map of id to sent hash: version `i`, hash `1000 + i` for the i-th known. */
function versionsOf(known: ReadonlyMap<string, number>): SentIndex {
  const order = [...known.keys()];
  return {
    versionsOf: (elements) =>
      elements.map(({ id, sent }) =>
        known.get(id) === sent ? { hash: 1000 + order.indexOf(id), version: order.indexOf(id) } : undefined,
      ),
  };
}

/** Bodies kept in a map, as the store keeps them in a table. */
class MapBodies implements KnownBodies {
  readonly rows = new Map<string, KnownBody>();
  readonly pages = new Map<string, VouchedBody>();
  asked = 0;
  elementsOf(digest: string) {
    this.asked += 1;
    return this.rows.get(digest);
  }
  previousOf(page: string) {
    return this.pages.get(page);
  }
  learn(digest: string, elements: KnownBody) {
    this.rows.set(digest, elements);
  }
}

const context = (known: SentIndex, bodies?: KnownBodies): ListingBodyContext => ({
  shown: 'GET /v1/sell/shop/items?page=1',
  mayEnd: true,
  secrets: [],
  known,
  bodies,
});

/** What a reader downstream sees of an element: its id, the hash of its text, and the version it is. */
const seen = (elements: readonly { json: unknown; sent?: number; unchanged?: unknown }[]) =>
  elements.map(({ json, sent, unchanged }) => ({
    id: (json as { id?: unknown } | null)?.id,
    sent,
    unchanged,
  }));

describe('a listing body received again byte for byte', () => {
  it('reads as the reference (the body read in full) whatever the store knows, and is remembered only when every element can be', () => {
    fc.assert(
      fc.property(
        fc.array(element, { maxLength: 8 }),
        fc.constantFrom(...layouts),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        (elements, space, knownNow) => {
          const bytes = bodyOf(elements, space);
          const text = bytes.toString('utf8');
          const json = JSON.parse(text) as { id?: unknown }[];
          // The store knows some of the texts, as a resync after a few changes does.
          const known = new Map<string, number>();
          for (const [i, { sent }] of (sentElements(bytes) ?? []).entries()) {
            const id = json[i]?.id;
            if (knownNow[i] && sent !== undefined && typeof id === 'string') known.set(id, sent);
          }
          const versions = versionsOf(known);
          const reference = readListingBody(response(bytes), context(versions));
          const bodies = new MapBodies();
          const first = readListingBody(response(bytes), context(versions, bodies));
          const again = readListingBody(response(bytes), context(versions, bodies));
          expect(first).toEqual(reference);
          expect(seen(again.elements)).toEqual(seen(reference.elements));
          const learnable =
            elements.length > 0 &&
            reference.elements.every(
              ({ json, sent }) => sent !== undefined && typeof (json as { id?: unknown }).id === 'string',
            );
          expect(bodies.rows.has(bodyDigest(bytes))).toBe(learnable);
        },
      ),
    );
  });

  it('is not taken for a body one byte apart', () => {
    const bodies = new MapBodies();
    const versions = versionsOf(new Map());
    readListingBody(response(bodyOf([{ id: 'a', price: 1 }], undefined)), context(versions, bodies));
    readListingBody(response(bodyOf([{ id: 'a', price: 2 }], undefined)), context(versions, bodies));
    expect(bodies.rows.size).toBe(2);
  });

  it('still ends the listing when empty or null, and is not remembered', () => {
    const bodies = new MapBodies();
    for (const text of ['', '  null ', '\ufeff[]']) {
      const read = readListingBody(response(Buffer.from(text)), context(versionsOf(new Map()), bodies));
      expect(read.elements).toEqual([]);
    }
    expect(bodies.rows.size).toBe(0);
  });
});

describe('a changed listing answer', () => {
  it("is read against the page's answer before: only the elements whose bytes changed are parsed, and none is looked up", () => {
    const before = bodyOf(
      [
        { id: 'a', price: 1 },
        { id: 'b', price: 2 },
        { id: 'c', price: 3 },
      ],
      undefined,
    );
    const sent = (sentElements(before) ?? []).map(({ sent }) => sent as number);
    const lengthsOf = (bytes: Uint8Array) => (sentElements(bytes) ?? []).map(({ start, end }) => end - start);
    const bodies = new MapBodies();
    bodies.pages.set('GET /v1/sell/shop/items?page=1', {
      ids: ['a', 'b', 'c'],
      sent,
      lengths: lengthsOf(before),
      versions: [1, 2, 3],
      hashes: [11, 12, 13],
    });
    const asked: string[] = [];
    const index: SentIndex = {
      versionsOf: (elements) => {
        asked.push(...elements.map(({ id }) => id));
        return elements.map(() => undefined);
      },
    };
    const after = bodyOf(
      [
        { id: 'c', price: 3 },
        { id: 'b', price: 5 },
        { id: 'a', price: 1 },
      ],
      undefined,
    );
    const read = readListingBody(response(after), context(index, bodies));
    expect(asked).toEqual([]);
    expect(read.elements.map(({ json, unchanged }) => [json, unchanged])).toEqual([
      [{ id: 'c' }, { version: 3, hash: 13 }],
      [{ id: 'b', price: '5' }, undefined],
      [{ id: 'a' }, { version: 1, hash: 11 }],
    ]);
    expect([...bodies.rows.values()]).toEqual([
      {
        ids: ['c', 'b', 'a'],
        sent: [sent[2], read.elements[1]?.sent, sent[0]],
        lengths: lengthsOf(after),
        read: [{ version: 3, hash: 13 }, undefined, { version: 1, hash: 11 }],
      },
    ]);
  });
});
