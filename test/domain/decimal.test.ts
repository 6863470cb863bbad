import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DECIMAL_LIMITS, parseDecimal, readDecimal } from '../../src/domain/decimal.js';

const reason = (input: string | number) => {
  const reading = readDecimal(input);
  return reading.ok ? `accepted ${reading.value}` : reading.reason;
};

describe('decimal limits', () => {
  it('documents 40 digits before and after the point and an exponent within ±100', () => {
    expect(DECIMAL_LIMITS).toEqual({ integerDigits: 40, fractionDigits: 40, exponent: 100 });
  });

  it.each([
    ['12.50', '12.5'],
    ['0012.5000', '12.5'],
    ['1e2', '100'],
    ['1.5E-3', '0.0015'],
    ['-0', '0'],
    ['.5', '0.5'],
    ['5.', '5'],
    ['+7', '7'],
    ['1e100', undefined],
    [`${'9'.repeat(40)}.${'9'.repeat(40)}`, `${'9'.repeat(40)}.${'9'.repeat(40)}`],
    ['0e100', '0'],
    ['1e-40', `0.${'0'.repeat(39)}1`],
    [`${'1'.repeat(40)}${'0'.repeat(100)}e-100`, '1'.repeat(40)],
  ])('reads %s within the limits', (input, expected) => {
    expect(parseDecimal(input)).toBe(expected ?? undefined);
  });

  it.each([
    ['1e999999999', 'an exponent beyond ±100'],
    ['1e-999999999', 'an exponent beyond ±100'],
    ['1e101', 'an exponent beyond ±100'],
    ['1e-101', 'an exponent beyond ±100'],
    ['1e41', 'digits before the point'],
    ['1e-41', 'digits after the point'],
    [`1${'0'.repeat(40)}`, '41 digits before the point (at most 40)'],
    [`0.${'0'.repeat(40)}1`, '41 digits after the point (at most 40)'],
    [1e300, 'an exponent beyond ±100'],
  ])('refuses %s with the reason', (input, expected) => {
    expect(reason(input)).toContain(expected);
    expect(reason(input)).toContain('a decimal outside the limits');
  });

  it.each(['', '.', '1e', 'e5', '1.2.3', '12 5', '0x10', 'NaN', 'Infinity', '1e+-2', '--1'])(
    'refuses %j as not a decimal',
    (input) => {
      expect(reason(input)).toMatch(/^not a decimal number: /);
    },
  );

  it('shows only the start of a huge literal in its reason', () => {
    const huge = `1${'0'.repeat(1_000_000)}`;
    const why = reason(huge);
    expect(why.length).toBeLessThan(200);
    expect(why).toContain('(1000001 characters)');
  });

  it('reads literals of tens of millions of digits in time linear in their length', () => {
    // Before the limits, "1e999999999" threw `Invalid string length` and a literal of millions of
    // zeros cost quadratic time (one slice per trailing zero).
    const started = performance.now();
    for (const literal of [
      `1${'0'.repeat(20_000_000)}`,
      `1.${'0'.repeat(20_000_000)}`,
      `0.${'0'.repeat(20_000_000)}1`,
      `${'0'.repeat(20_000_000)}1.5`,
      `1${'0'.repeat(20_000_000)}e-20000000`,
    ]) {
      readDecimal(literal);
    }
    // Linear is about a second here; quadratic, as before, would be hours. The bound only catches that.
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(parseDecimal(`1.${'0'.repeat(20_000_000)}`)).toBe('1');
    expect(parseDecimal(`${'0'.repeat(20_000_000)}1.5`)).toBe('1.5');
    expect(reason(`1${'0'.repeat(20_000_000)}`)).toContain('20000001 digits before the point');
  });

  it('agrees with exact BigInt arithmetic on every decimal within the limits', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 20n) + 1n, max: 10n ** 20n - 1n }),
        fc.integer({ min: -20, max: 20 }),
        fc.nat({ max: 3 }),
        (mantissa, exponent, zeros) => {
          const literal = `${mantissa}${'0'.repeat(zeros)}e${exponent - zeros}`;
          // The value is mantissa * 10^exponent: write it plainly with BigInt.
          const negative = mantissa < 0n;
          const digits = (negative ? -mantissa : mantissa).toString();
          let plain: string;
          if (exponent >= 0) plain = mantissa === 0n ? '0' : digits + '0'.repeat(exponent);
          else {
            const padded = digits.padStart(-exponent + 1, '0');
            const whole = padded.slice(0, exponent).replace(/^0+(?=\d)/, '');
            const fraction = padded.slice(exponent).replace(/0+$/, '');
            plain = fraction === '' ? whole : `${whole}.${fraction}`;
          }
          if (plain === '0' || /^0(\.0*)?$/.test(plain)) plain = '0';
          else if (negative) plain = `-${plain}`;
          expect(parseDecimal(literal)).toBe(plain);
        },
      ),
    );
  });
});
