import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeUtf8, ReceivedResponse } from '../../../src/api/http/response.js';

describe('a response body as text', () => {
  it('decodes as fetch does (WHATWG UTF-8: byte order mark dropped, bytes that are not UTF-8 as U+FFFD)', () => {
    const whatwg = new TextDecoder();
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 40 }),
      fc.string({ unit: 'binary' }).map((text) => new Uint8Array(Buffer.from(`\ufeff${text}`))),
    );
    fc.assert(
      fc.property(bytes, (body) => {
        expect(decodeUtf8(body)).toBe(whatwg.decode(body));
      }),
    );
  });

  it('is decoded from the bytes received, once', () => {
    const response = new ReceivedResponse(200, {}, Buffer.from('\ufeff[{"id":"é"}]'));
    expect(response.body).toBe('[{"id":"é"}]');
    expect(response.body).toBe(response.body);
  });
});
