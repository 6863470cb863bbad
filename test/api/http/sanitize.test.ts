import { describe, expect, it } from 'vitest';
import { REDACTED, sanitizeBody, sanitizeUrl } from '../../../src/api/http/sanitize.js';
import { serverMessage } from '../../../src/api/http/server-message.js';

describe('sanitizeUrl', () => {
  it('blanks secret query parameters and keeps the others', () => {
    const shown = sanitizeUrl(
      '/v1/oauth/token?grant_type=password&password=hunter22&access_token=abcd1234&page=3',
    );
    expect(shown).toBe(
      `/v1/oauth/token?grant_type=password&password=${REDACTED}&access_token=${REDACTED}&page=3`,
    );
  });

  it('drops userinfo from absolute URLs', () => {
    const shown = sanitizeUrl('https://owner:s3cret-pw@api.example.com/v1/items/7?refresh_token=zz99', {
      pathOnly: false,
    });
    expect(shown).toBe(`https://api.example.com/v1/items/7?refresh_token=${REDACTED}`);
    expect(shown).not.toContain('s3cret-pw');
  });

  it('shows filters readably', () => {
    expect(sanitizeUrl('/v1/sell/shop/items?page=2&f%5Bprice%5D=10..50')).toBe(
      '/v1/sell/shop/items?page=2&f[price]=10..50',
    );
  });
});

describe('sanitizeBody', () => {
  it('blanks token fields, bearer values and known secrets, on one line', () => {
    const body =
      '{"access_token":"tok-AAAA","refresh_token":"ref-BBBB"}\nAuthorization: Bearer tok-CCCC\nclient said pw=open-sesame';
    const line = sanitizeBody(body, ['open-sesame']);
    for (const secret of ['tok-AAAA', 'ref-BBBB', 'tok-CCCC', 'open-sesame'])
      expect(line).not.toContain(secret);
    expect(line).not.toContain('\n');
  });

  it('blanks secrets echoed URL-encoded or form-encoded', () => {
    const secret = 'p@ss word/ü+&=~x';
    const echoes = [
      encodeURIComponent(secret),
      encodeURIComponent(secret).replace(/%20/g, '+'),
      new URLSearchParams({ s: secret }).toString().slice(2),
      encodeURIComponent(secret).toLowerCase(),
    ];
    for (const echo of echoes) {
      const line = sanitizeBody(`{"detail":"bad login name=${echo}&x=1"}`, [secret]);
      expect(line).toBe(`{"detail":"bad login name=${REDACTED}&x=1"}`);
    }
  });

  it('cuts long bodies', () => {
    const line = sanitizeBody('x'.repeat(5000), [], 50);
    expect(line).toBe(`${'x'.repeat(50)}…`);
  });
});

describe('serverMessage', () => {
  it('prefers the message of a JSON error body', () => {
    expect(serverMessage('{"error":"invalid_filter","message":"f[price] must look like 10..50"}', [])).toBe(
      'f[price] must look like 10..50',
    );
  });

  it('strips markup from an HTML error page', () => {
    expect(serverMessage('<html><body><h1>502 Bad Gateway</h1></body></html>', [])).toBe('502 Bad Gateway');
  });

  it('says when there was nothing to say', () => {
    expect(serverMessage('', [])).toBe('empty body');
  });
});
