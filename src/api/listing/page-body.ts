import type { VouchedBody } from '../../domain/unchanged-item.js';
import { ProtocolError } from '../../errors.js';
import type { HttpResponse } from '../http/response.js';
import { TransientError } from '../http/retry.js';
import { serverMessageField } from '../http/server-message.js';
import { exactElement, ITEM_LAYOUT, type ParsedElement } from '../item/item-schema.js';
import { elementSources } from '../item/json-source.js';
import { knownElements, type SentIndex } from '../item/known-elements.js';
import { type SentElement, sentElements, sentElementsAgainst } from '../item/sent-text.js';
import { bodyDigest, type KnownBodies, knownBody, knownElementsOf } from './known-bodies.js';

/** A listing page as received: each element parsed, with exact numbers and its `raw`. */
export interface RawPage {
  readonly elements: readonly ParsedElement[];
}

/**
 * Statuses that end the listing like an empty page once a page with items was read. The spec shows no
 * status for a page past the end; Django REST Framework answers 404, others 204.
 */
export const PAST_END_STATUSES: readonly number[] = [204, 404];

export interface ListingBodyContext {
  /** The request as shown in messages, already sanitised. */
  readonly shown: string;
  /** Whether the page follows a page with items, so that an answer with no list can be the end. */
  readonly mayEnd: boolean;
  readonly secrets: readonly string[];
  /** The store's elements already read: each element is then hashed as sent, and one read before from
   * the same bytes is not read again. */
  readonly known?: SentIndex;
  /** Bodies read in full before (with `known`), by digest and by page (`shown` names the page): one
   * received again byte for byte is not parsed, a changed one is read against the page's before. */
  readonly bodies?: KnownBodies;
}

const NO_ITEMS: RawPage = Object.freeze({ elements: [] });

/**
 * A 200 body as JSON. A body that is not JSON was cut short or garbled on the way (a dropped connection
 * can still look like a complete response), so it is worth fetching again: a TransientError.
 */
export function parseJsonBody(response: HttpResponse, shown: string): unknown {
  try {
    return JSON.parse(response.body);
  } catch {
    throw new TransientError(
      shown,
      `the ${response.body.length}-character HTTP ${response.status} body is not complete JSON`,
    );
  }
}

/**
 * A listing answer as a RawPage. A body that is not JSON is worth fetching again (parseJsonBody); valid
 * JSON that is not an array is the server breaking the protocol, and is not.
 */
export function readListingBody(response: HttpResponse, context: ListingBodyContext): RawPage {
  if (context.mayEnd && isPastEnd(response)) return NO_ITEMS;
  const { known, bodies, shown: page } = context;
  if (!known) return parsedBody(response, context);
  const digest = bodies ? bodyDigest(response.bytes) : undefined;
  const before = digest === undefined ? undefined : bodies?.elementsOf(digest);
  const again = before ? knownBody(before, known) : undefined;
  if (again) return { elements: again };
  const previous = bodies?.previousOf(page);
  const spans = spansOf(response.bytes, previous);
  const elements = spans && knownElements(response.bytes, spans, known, previous);
  // Not one JSON array of JSON values: the reference says why (or reads it, should it be one after all).
  if (spans === undefined || elements === undefined) return parsedBody(response, context);
  const learnt = digest === undefined || before ? undefined : knownElementsOf(elements, spans);
  if (digest !== undefined && learnt) bodies?.learn(digest, learnt, page);
  return { elements };
}

/** The elements of `bytes`, delimited with the help of the same page's answer before when it can give it,
 * each scanned one with its source (`SentElement.source`). */
function spansOf(bytes: Uint8Array, previous: VouchedBody | undefined): SentElement[] | undefined {
  const lengths = previous?.lengths;
  return previous && lengths
    ? sentElementsAgainst(bytes, { sent: previous.sent, lengths }, ITEM_LAYOUT)
    : sentElements(bytes, ITEM_LAYOUT);
}

/** The reference reading of a listing answer: parsed in full, each element with its exact numbers. */
function parsedBody(response: HttpResponse, context: ListingBodyContext): RawPage {
  const json = parseJsonBody(response, context.shown);
  if (!Array.isArray(json)) throw notAList(json, response, context);
  const sources = elementSources(response.body, ITEM_LAYOUT, json);
  if (sources.length !== json.length) {
    throw new ProtocolError(`${context.shown} answered a JSON array whose elements could not be delimited.`);
  }
  return { elements: sources.map((source, i) => exactElement(json[i], source)) };
}

function isPastEnd(response: HttpResponse): boolean {
  if (PAST_END_STATUSES.includes(response.status)) return true;
  // A list is no end: told from its first byte, so that a page need not be decoded to be recognised.
  if (startsWithBracket(response.bytes)) return false;
  const body = response.body.trim();
  return body === '' || body === 'null';
}

const OPEN_BRACKET = 0x5b;
const isAsciiSpace = (byte: number | undefined) =>
  byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

function startsWithBracket(bytes: Uint8Array): boolean {
  let at = 0;
  while (isAsciiSpace(bytes[at])) at += 1;
  return bytes[at] === OPEN_BRACKET;
}

function notAList(json: unknown, response: HttpResponse, context: ListingBodyContext): ProtocolError {
  const got = json === null ? 'null' : typeof json === 'object' ? 'an object' : `a ${typeof json}`;
  const said = serverMessageField(response.body, context.secrets);
  return new ProtocolError(
    `${context.shown} answered HTTP ${response.status} with ${got} instead of a list of items${said ? `: ${said}` : ''}.`,
  );
}
