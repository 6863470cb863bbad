/**
 * Prices travel as exact decimal strings in plain notation. The API sends them as JSON numbers or as
 * strings ("12.5", 12.50, "12.50" are one price); the canonical form drops trailing fractional zeros
 * so that equal prices compare equal as strings.
 *
 * A JSON number has already been through a binary double when it reaches us; `String(n)` gives the
 * shortest decimal that round-trips, which is the literal the server wrote for any price of up to 15
 * significant digits.
 */

export type Decimal = string & { readonly __decimal: unique symbol };

const PLAIN = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

export function parseDecimal(input: string | number): Decimal | undefined {
  if (typeof input === 'number' && !Number.isFinite(input)) return undefined;
  const text = typeof input === 'number' ? String(input) : input.trim();
  const match = PLAIN.exec(text);
  if (!match) return undefined;
  const [, sign = '', intPart = '', fracPart = '', exp = '0'] = match;
  if (intPart === '' && fracPart === '') return undefined;
  return canonical(sign, intPart + fracPart, fracPart.length - Number(exp));
}

/** `digits` scaled down by `scale` places, written plainly with no redundant zeros. */
function canonical(sign: string, digits: string, scale: number): Decimal {
  let d = digits.replace(/^0+/, '');
  let s = scale;
  while (s > 0 && d.endsWith('0')) {
    d = d.slice(0, -1);
    s -= 1;
  }
  if (d === '') return '0' as Decimal;
  if (s < 0) d += '0'.repeat(-s);
  const whole = s > 0 ? d.slice(0, Math.max(0, d.length - s)) || '0' : d;
  const frac = s > 0 ? d.slice(-s).padStart(s, '0') : '';
  return `${sign === '-' ? '-' : ''}${whole}${frac ? `.${frac}` : ''}` as Decimal;
}
