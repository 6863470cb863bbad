import type { IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { ProtocolError, ResponseTooLargeError } from '../../errors.js';
import { TransientError } from './retry.js';

/** A decoder of one content coding, its output capped at `maxOutputLength` bytes. */
type Decoder = (bytes: Uint8Array, options: { maxOutputLength: number }) => Buffer;

/**
 * What a body is sent in, decoded. shop-sync asks for no encoding, yet servers behind some proxies
 * compress anyway; undici hands the bytes over as sent. `deflate` is zlib-wrapped by RFC 9110, and raw
 * DEFLATE from servers that misread it.
 */
const DECODERS: Readonly<Record<string, Decoder>> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: (bytes, options) => (isZlibHeader(bytes) ? inflateSync : inflateRawSync)(bytes, options),
  br: brotliDecompressSync,
};

/**
 * The body of a response, decoded from its `Content-Encoding` (codings applied in order, undone in
 * reverse). Decoded, it is held to the response cap like any body. A coding shop-sync cannot decode
 * fails for good; bytes that do not decode were cut short or garbled on the way, worth fetching again.
 */
export function decodedBody(
  bytes: Uint8Array,
  headers: IncomingHttpHeaders,
  shown: string,
  maxBytes: number,
): Uint8Array {
  const codings = codingsOf(headers['content-encoding']);
  let body = bytes;
  for (const coding of codings.reverse()) {
    const decode = DECODERS[coding];
    if (!decode) {
      throw new ProtocolError(
        `${shown} answered in Content-Encoding "${coding}", which shop-sync cannot decode (it reads gzip, deflate and br).`,
      );
    }
    body = decoded(decode, body, shown, maxBytes, coding);
  }
  return body;
}

function decoded(decode: Decoder, bytes: Uint8Array, shown: string, maxBytes: number, coding: string) {
  try {
    return decode(bytes, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ResponseTooLargeError(
        `${shown} failed: the response exceeded ${maxBytes} bytes once decoded from ${coding}`,
        maxBytes,
        { cause: error },
      );
    }
    throw new TransientError(shown, `the ${coding} body does not decode`, undefined, undefined, {
      cause: error,
    });
  }
}

function codingsOf(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/** RFC 1950: a zlib stream starts with a method byte of 8 (deflate) and a check that divides by 31. */
function isZlibHeader(bytes: Uint8Array): boolean {
  const [cmf = 0, flg = 0] = bytes;
  return (cmf & 0x0f) === 8 && ((cmf << 8) | flg) % 31 === 0;
}
