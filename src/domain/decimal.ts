/**
 * Prices travel as exact decimal strings in plain notation. The API sends them as JSON numbers or as
 * strings ("12.5", 12.50, "12.50" are one price); the canonical form drops trailing fractional zeros
 * so that equal prices compare equal as strings.
 *
 * A JSON number has already been through a binary double when it reaches us; `String(n)` gives the
 * shortest decimal that round-trips, which is the literal the server wrote for any price of up to 15
 * significant digits.
 *
 * A decimal has limits (DECIMAL_LIMITS), checked before anything is built: "1e999999999" would
 * otherwise be written out as a billion digits (`Invalid string length`), and a literal of millions of
 * digits cost seconds. A literal is read in one pass over its characters, whatever its length.
 */

export type Decimal = string & { readonly __decimal: unique symbol };

/**
 * The decimals shop-sync keeps (README "Values"): at most this many digits before and after the point
 * once written plainly without redundant zeros, and an exponent, when written, within ±`exponent`.
 */
export const DECIMAL_LIMITS = Object.freeze({ integerDigits: 40, fractionDigits: 40, exponent: 100 });

export type DecimalReading = { ok: true; value: Decimal } | { ok: false; reason: string };

export function parseDecimal(input: string | number): Decimal | undefined {
  const reading = readDecimal(input);
  return reading.ok ? reading.value : undefined;
}

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const isDigit = (c: number) => c >= DIGIT_0 && c <= DIGIT_9;

/** `input` as a canonical Decimal, or why it is not one within DECIMAL_LIMITS. */
export function readDecimal(input: string | number): DecimalReading {
  if (typeof input === 'number' && !Number.isFinite(input)) return notDecimal(input);
  const text = typeof input === 'number' ? String(input) : input.trim();
  // sign? digits* ('.' digits*)? ([eE] sign? digits+)?, by hand: a regex's captures would copy a huge literal.
  let at = 0;
  const negative = text.charCodeAt(0) === 0x2d;
  if (negative || text.charCodeAt(0) === 0x2b) at += 1;
  const intStart = at;
  while (isDigit(text.charCodeAt(at))) at += 1;
  const intEnd = at;
  let fracStart = at;
  let fracEnd = at;
  if (text.charCodeAt(at) === 0x2e) {
    fracStart = at + 1;
    at = fracStart;
    while (isDigit(text.charCodeAt(at))) at += 1;
    fracEnd = at;
  }
  if (intEnd === intStart && fracEnd === fracStart) return notDecimal(input);
  let exponent = 0;
  const e = text.charCodeAt(at);
  if (e === 0x65 || e === 0x45) {
    at += 1;
    const minus = text.charCodeAt(at) === 0x2d;
    if (minus || text.charCodeAt(at) === 0x2b) at += 1;
    const expStart = at;
    while (text.charCodeAt(at) === DIGIT_0) at += 1;
    const significant = at;
    while (isDigit(text.charCodeAt(at))) at += 1;
    if (at === expStart) return notDecimal(input);
    // More than three significant digits is past the limit whatever they say; never parse them all.
    exponent = at - significant > 3 ? Number.POSITIVE_INFINITY : Number(text.slice(significant, at) || '0');
    if (exponent > DECIMAL_LIMITS.exponent)
      return outside(input, `an exponent beyond ±${DECIMAL_LIMITS.exponent}`);
    if (minus) exponent = -exponent;
  }
  if (at !== text.length) return notDecimal(input);

  // The digits, int then fraction, as one sequence whose point sits `point` digits in.
  const intLength = intEnd - intStart;
  const length = intLength + (fracEnd - fracStart);
  const digitAt = (k: number): number =>
    k < 0 || k >= length
      ? DIGIT_0
      : text.charCodeAt(k < intLength ? intStart + k : fracStart + k - intLength);
  let first = 0;
  while (first < length && digitAt(first) === DIGIT_0) first += 1;
  if (first === length) return { ok: true, value: '0' as Decimal };
  let last = length - 1;
  while (digitAt(last) === DIGIT_0) last -= 1;
  const point = intLength + exponent;
  const integerDigits = Math.max(0, point - first);
  const fractionDigits = Math.max(0, last + 1 - point);
  if (integerDigits > DECIMAL_LIMITS.integerDigits)
    return outside(
      input,
      `${integerDigits} digits before the point (at most ${DECIMAL_LIMITS.integerDigits})`,
    );
  if (fractionDigits > DECIMAL_LIMITS.fractionDigits)
    return outside(
      input,
      `${fractionDigits} digits after the point (at most ${DECIMAL_LIMITS.fractionDigits})`,
    );
  let whole = integerDigits === 0 ? '0' : '';
  for (let k = first; k < point; k += 1) whole += String.fromCharCode(digitAt(k));
  let fraction = '';
  for (let k = point; k <= last; k += 1) fraction += String.fromCharCode(digitAt(k));
  const value = `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
  return { ok: true, value: value as Decimal };
}

/** How a literal is shown in a reason: its start only, so that a huge one costs nothing to report. */
export function shownLiteral(input: unknown): string {
  if (typeof input === 'string')
    return input.length > 40
      ? `${JSON.stringify(input.slice(0, 40))}… (${input.length} characters)`
      : JSON.stringify(input);
  return String(input);
}

function notDecimal(input: string | number): DecimalReading {
  return { ok: false, reason: `not a decimal number: ${shownLiteral(input)}` };
}

function outside(input: string | number, what: string): DecimalReading {
  return { ok: false, reason: `a decimal outside the limits, with ${what}: ${shownLiteral(input)}` };
}
