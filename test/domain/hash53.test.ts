import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Hash53 } from '../../src/domain/hash53.js';

/**
 * `Hash53.bytes` as defined: the length, then each whole group of four bytes as a little-endian word,
 * then each byte left as a word of its own. Stored hashes (`item_versions.sent`, `listing_bodies`)
 * were made this way, so any faster reading of the words must give exactly these.
 */
function defined(bytes: Uint8Array, start: number, end: number): number {
  const hash = new Hash53().word(end - start);
  let at = start;
  for (; at + 3 < end; at += 4) {
    const [a, b, c, d] = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]] as number[];
    hash.word((a as number) | ((b as number) << 8) | ((c as number) << 16) | ((d as number) << 24));
  }
  for (; at < end; at += 1) hash.word(bytes[at] as number);
  return hash.digest();
}

describe('Hash53.bytes', () => {
  it('hashes any range of bytes, at any offset in any buffer, as defined', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }),
        fc.nat(7),
        fc.nat(),
        fc.nat(),
        (content, offset, a, b) => {
          // A view that starts anywhere in its buffer, as a listing body's bytes do.
          const bytes = new Uint8Array(offset + content.length);
          bytes.set(content, offset);
          const view = bytes.subarray(offset);
          const start = content.length === 0 ? 0 : a % (content.length + 1);
          const end = start + (b % (content.length - start + 1));
          expect(new Hash53().bytes(view, start, end).digest()).toBe(defined(view, start, end));
        },
      ),
    );
  });

  it('gives the hashes stores already hold (values of the four-bytes-composed reading)', () => {
    const bytes = Buffer.from('{"id":"0bf796n-24xq","price":"12.50"}');
    expect(new Hash53().bytes(bytes).digest()).toBe(4102587316402787);
    expect(new Hash53().bytes(bytes, 1, 9).digest()).toBe(51412516483734);
    expect(new Hash53().bytes(Buffer.alloc(0)).digest()).toBe(192506398262402);
  });
});
