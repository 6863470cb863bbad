/**
 * Error messages and log lines name the request that failed and quote what the server said; neither may
 * carry a secret. These helpers strip credentials from URLs and bodies before they are shown anywhere.
 */
import { REDACTED, SECRET_NAMES, SECRET_QUERY_PARAMS } from '../../secrets.js';

const SECRET_PARAMS = new Set(SECRET_QUERY_PARAMS.map((name) => name.toLowerCase()));
const NAMES = SECRET_NAMES.join('|');
const SECRET_JSON_FIELD = new RegExp(`("(?:${NAMES})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'gi');
const SECRET_FORM_FIELD = new RegExp(`\\b(${NAMES})=[^&\\s"]*`, 'gi');
const BEARER = /\b(Bearer)\s+[^\s"',]+/gi;

export { REDACTED };

/** The URL without userinfo and with secret query parameters blanked, e.g. `/v1/x?page=3`. */
export function sanitizeUrl(url: string | URL, { pathOnly = true }: { pathOnly?: boolean } = {}): string {
  let parsed: URL;
  try {
    parsed = new URL(url, 'http://invalid.invalid');
  } catch {
    return REDACTED;
  }
  parsed.username = '';
  parsed.password = '';
  for (const name of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAMS.has(name.toLowerCase())) parsed.searchParams.set(name, REDACTED);
  }
  const query = decodeURIComponent(parsed.search);
  return pathOnly ? `${parsed.pathname}${query}` : `${parsed.origin}${parsed.pathname}${query}`;
}

/**
 * A server's body reduced to one short line for a message: secret-looking fields blanked, every known
 * secret value removed wherever it appears, whitespace collapsed, and the rest cut at `maxLength`.
 */
export function sanitizeBody(body: string, secrets: readonly string[] = [], maxLength = 200): string {
  let text = redactValues(body, secrets)
    .replace(SECRET_JSON_FIELD, `$1"${REDACTED}"`)
    .replace(SECRET_FORM_FIELD, `$1=${REDACTED}`)
    .replace(BEARER, `$1 ${REDACTED}`)
    .replace(/\s+/g, ' ')
    .trim();
  if (text.length > maxLength) text = `${text.slice(0, maxLength)}…`;
  return text;
}

/**
 * `text` with every occurrence of each secret replaced, also as servers echo it URL-encoded (percent
 * encoding, and form encoding with `+` for spaces). Secrets shorter than 4 characters are left alone
 * because blanking them would shred ordinary words without protecting anything.
 */
export function redactValues(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    for (const spelling of spellings(secret)) out = out.split(spelling).join(REDACTED);
  }
  return out;
}

/** The secret as written and as each URL encoding writes it, longest first so none leaves a remnant. */
function spellings(secret: string): string[] {
  const percent = encodeURIComponent(secret);
  const form = new URLSearchParams({ s: secret }).toString().slice(2);
  const variants = [secret, percent, percent.replace(/%20/g, '+'), form, form.replace(/\+/g, '%20')];
  const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (code) => code.toLowerCase());
  return [...new Set([...variants, ...variants.map(lowerHex)])].sort((a, b) => b.length - a.length);
}
