import { ProtocolError } from '../errors.js';
import type { HttpResponse } from './http.js';
import { arrayElementTexts } from './json-array.js';
import { TransientError } from './retry.js';

/** A listing page as received: each element parsed, and its source text for `raw`. */
export interface RawPage {
  readonly elements: readonly unknown[];
  readonly texts: readonly string[];
}

/**
 * A 200 listing body as a RawPage. A body that is not JSON was cut short or garbled on the way (a
 * dropped connection can still look like a complete response), so it is worth fetching again; valid
 * JSON that is not an array is the server breaking the protocol, and is not.
 */
export function readListingBody(response: HttpResponse, shown: string): RawPage {
  let json: unknown;
  try {
    json = JSON.parse(response.body);
  } catch {
    throw new TransientError(
      shown,
      `the ${response.body.length}-character HTTP 200 body is not complete JSON`,
    );
  }
  if (!Array.isArray(json)) {
    const got = json === null ? 'null' : typeof json;
    throw new ProtocolError(`${shown} answered HTTP 200 with ${got} instead of a JSON array of items.`);
  }
  const texts = arrayElementTexts(response.body);
  if (texts.length !== json.length) {
    throw new ProtocolError(`${shown} answered a JSON array whose elements could not be delimited.`);
  }
  return { elements: json, texts };
}
