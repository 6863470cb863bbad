/**
 * Names whose values are secrets wherever they appear: log fields, URL query parameters, JSON and form
 * bodies. The logger's redaction and the URL and body sanitiser both derive their lists from this one.
 */
export const SECRET_NAMES = [
  'password',
  'client_secret',
  'access_token',
  'refresh_token',
  'authorization',
  'token',
  'api_key',
  'apikey',
] as const;

/** `client_secret` → `clientSecret`: the same secret as a JavaScript property. */
export function camelCase(name: string): string {
  return name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
}
