import type { IncomingHttpHeaders } from 'node:http';

/** An answer of the marketplace, whatever its status. */
export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  readonly bytes: Uint8Array;
  /** The body as text (UTF-8, as undici's `text()` decodes it). */
  readonly body: string;
}

/**
 * A response whose body is decoded only when asked for: a listing page the store has read before is
 * recognised from its bytes alone (`listing/known-bodies.ts`), and decoding 100,000 items' pages cost
 * ~0.2 s of an unchanged resync.
 */
export class ReceivedResponse implements HttpResponse {
  private text: string | undefined;

  constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    readonly bytes: Uint8Array,
  ) {}

  get body(): string {
    this.text ??= decodeUtf8(this.bytes);
    return this.text;
  }
}

const BOM = [0xef, 0xbb, 0xbf];

/** As undici's `body.text()`: a leading byte order mark dropped, bytes that are not UTF-8 as U+FFFD. */
export function decodeUtf8(bytes: Uint8Array): string {
  const start = bytes.length > 2 && BOM.every((byte, i) => bytes[i] === byte) ? BOM.length : 0;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start);
}
