/**
 * Values the marketplace hands out that shop-sync later sends back (tokens, URLs) are checked where they
 * arrive: a value that cannot travel in a request would otherwise fail deep inside the HTTP client, on
 * every attempt, as if the network were at fault. A bad one is a permanent ProtocolError that names the
 * endpoint and the field; the value itself is never quoted, since it is a secret or may carry anything.
 */
import { ProtocolError } from '../../errors.js';

/**
 * What a header value may hold (RFC 9110 field-value: visible ASCII, space, tab and obs-text, i.e. Latin-1
 * above 0x7f). Anything else (CR, LF, NUL, other control characters, DEL, characters beyond Latin-1)
 * cannot be written into a header at all.
 */
const HEADER_UNSAFE = /[^\t\x20-\x7e\x80-\xff]/;
/** Header values are trimmed by every server on the way: a token with such edges would not arrive as issued. */
const EDGE_WHITESPACE = /^[\t ]|[\t ]$/;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `value` can be sent, unchanged, as (part of) an HTTP header value. */
export function isHeaderSafe(value: string): boolean {
  return !HEADER_UNSAFE.test(value) && !EDGE_WHITESPACE.test(value);
}

/**
 * Text that survives form or URL encoding unchanged: no control characters and no lone surrogate
 * (which encoders replace with U+FFFD or refuse), so the server gets back exactly what it handed out.
 */
export function isRequestSafe(value: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
  return !/[\x00-\x1f\x7f]/.test(value) && !LONE_SURROGATE.test(value);
}

/** Where a value came from, for the message: the request as shown and the endpoint in words. */
export interface ValueSource {
  /** e.g. `POST /v1/oauth/token (grant password)`. */
  readonly request: string;
  /** e.g. `the token endpoint`. */
  readonly endpoint: string;
}

/**
 * `value` if it can go into an HTTP header; otherwise the permanent error. `field` names the value with
 * its article (`an access_token`).
 */
export function headerValueFrom(source: ValueSource, field: string, value: string): string {
  if (isHeaderSafe(value)) return value;
  throw new ProtocolError(
    `${source.request} failed: ${source.endpoint} returned ${field} that cannot be sent in an HTTP header.`,
  );
}

/** `value` if it can be sent back in a request body or URL unchanged; otherwise the permanent error. */
export function requestValueFrom(source: ValueSource, field: string, value: string): string {
  if (isRequestSafe(value)) return value;
  throw new ProtocolError(
    `${source.request} failed: ${source.endpoint} returned ${field} that cannot be sent back in a request.`,
  );
}
