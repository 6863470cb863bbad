import { ProtocolError } from '../../errors.js';
import type { HttpResponse } from '../http/response.js';
import { TransientError } from '../http/retry.js';
import { serverMessageField } from '../http/server-message.js';
import { exactElement, ITEM_LAYOUT, type ParsedElement } from '../item/item-schema.js';
import { elementSources } from '../item/json-source.js';
import { knownElements, type SentIndex } from '../item/known-elements.js';
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
  /** The store's texts already read: each element is then hashed as sent, and one read before is not read again. */
  readonly known?: SentIndex;
  /** Bodies read in full before (with `known`): one received again byte for byte is not parsed. */
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
  const { known, bodies } = context;
  const digest = known && bodies ? bodyDigest(response.bytes) : undefined;
  const before = digest === undefined ? undefined : bodies?.elementsOf(digest);
  const again = before && known ? knownBody(before, known) : undefined;
  if (again) return { elements: again };
  const json = parseJsonBody(response, context.shown);
  if (!Array.isArray(json)) throw notAList(json, response, context);
  const elements = known ? knownElements(response.body, json, known) : parsedElements(response.body, json);
  if (elements === undefined) {
    throw new ProtocolError(`${context.shown} answered a JSON array whose elements could not be delimited.`);
  }
  const learnt = digest === undefined || before ? undefined : knownElementsOf(elements);
  if (digest !== undefined && learnt) bodies?.learn(digest, learnt);
  return { elements };
}

/** Each element of the array `json` parsed from `text`, with its exact numbers; undefined when the
 * text's elements cannot be delimited. */
function parsedElements(text: string, json: readonly unknown[]): ParsedElement[] | undefined {
  const sources = elementSources(text, ITEM_LAYOUT, json);
  if (sources.length !== json.length) return undefined;
  return sources.map((source, i) => exactElement(json[i], source));
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
