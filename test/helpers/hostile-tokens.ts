/** Access tokens no HTTP header can carry, one of each kind issue 20 names, with the kind in words. */
export const HOSTILE_ACCESS_TOKENS: ReadonlyArray<readonly [string, string]> = [
  ['CR/LF inside', 'tok\r\nX-Injected: yes'],
  ['a trailing LF', 'tok-valid-looking\n'],
  ['a NUL', 'tok\u0000rest'],
  ['another control character', 'tok\u0007bell'],
  ['DEL', 'tok\u007fdel'],
  ['a character beyond Latin-1', 'tok\u0100wide'],
  ['an emoji', 'tok\u{1F511}key'],
  ['leading whitespace', ' tok-with-edge'],
];

/** The sentence for a hostile access token from the password grant. */
export const HOSTILE_ACCESS_TOKEN_SENTENCE =
  'POST /v1/oauth/token (grant password) failed: the token endpoint returned an access_token that cannot be sent in an HTTP header.';
