/**
 * The names under which secrets travel: JSON and log fields, form fields, query parameters and headers.
 * Written once here; the logger's redaction paths and the URL/body sanitiser derive from it.
 */
export const SECRET_NAMES = [
  'password',
  'client_secret',
  'clientSecret',
  'access_token',
  'accessToken',
  'refresh_token',
  'refreshToken',
  'authorization',
  'token',
  'api_key',
  'apikey',
] as const;

/**
 * Query parameters that carry a secret: every name above, and OAuth's authorization `code`, which is a
 * secret in a URL but elsewhere (a log field, an error body) is an error's code.
 */
export const SECRET_QUERY_PARAMS: readonly string[] = [...SECRET_NAMES, 'code'];

/** Replaces a secret wherever it is shown. */
export const REDACTED = '[redacted]';
