/**
 * A request that failed without an answer, told apart by what it says about the settings. A wrong
 * port, a host name that does not resolve or `https://` against a plain-HTTP server look, to a retry
 * loop, just like an outage, and would be retried for the whole budget. What tells them apart is
 * whether this process ever had an answer from that address: before the first one a refused
 * connection is far more likely a setting than an outage, so it gets a few seconds of retries (enough
 * for a server that is restarting) and then fails naming the setting. After it, the same failure is an
 * outage and is retried within the budget. A TLS failure is never retried: no second attempt will
 * change a protocol or certificate mismatch; nor is `http://` against a TLS server, which drops the
 * connection and is told apart by one TLS handshake (`tls-probe.ts`).
 */
import { ConfigError, type ShopSyncError } from '../../errors.js';
import { sanitizeUrl } from './sanitize.js';

/** How long a failure before the first answer is retried before it is reported as a setting error. */
export const FIRST_CONTACT_MS = 3_000;

export type TransportFailureKind =
  /** Nothing accepts connections at the address (wrong port, server down). */
  | 'refused'
  /** The host name does not resolve. */
  | 'dns'
  /** No route to the host or its network. */
  | 'unroutable'
  /** The TLS handshake failed: not a TLS server, or a certificate that is not trusted. */
  | 'tls'
  /** Anything else (timeouts, dropped connections): worth retrying. */
  | 'other';

const REFUSED = new Set(['ECONNREFUSED']);
const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA']);
const UNROUTABLE = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
const CERTIFICATE =
  /^(?:CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(?:VERIFY|GET_ISSUER)|ERR_TLS_CERT)/;

/** The first error code on `error` or its causes (undici wraps some socket errors once or twice). */
export function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && !code.startsWith('UND_ERR_')) return code;
    current = current.cause;
  }
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function classifyTransportFailure(error: unknown): TransportFailureKind {
  const code = errorCode(error);
  if (code === undefined) return 'other';
  if (REFUSED.has(code)) return 'refused';
  if (DNS.has(code)) return 'dns';
  if (UNROUTABLE.has(code)) return 'unroutable';
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO' || CERTIFICATE.test(code)) return 'tls';
  return 'other';
}

/** Origins that have answered this process at least once: from then on, failing to reach them is an outage. */
const answered = new Set<string>();

export function markAnswered(origin: string): void {
  answered.add(origin);
}

export function hasAnswered(origin: string): boolean {
  return answered.has(origin);
}

/**
 * The setting error for a failure of `kind` reaching `baseUrl` (named `setting`); `tried` says how hard
 * it was tried (`after 3 attempts in 3 s`), empty when it was not retried.
 */
export function settingError(
  kind: Exclude<TransportFailureKind, 'other'> | 'speaks-tls',
  code: string,
  baseUrl: URL,
  setting: string,
  tried: string,
): ShopSyncError {
  const shown = sanitizeUrl(baseUrl, { pathOnly: false }).replace(/\/$/, '');
  const how = tried === '' ? '' : `, ${tried}`;
  const found = {
    refused: `nothing accepts connections at ${baseUrl.host} (${code}${how}); check the host and port, and that the marketplace is running`,
    dns: `the host name ${baseUrl.hostname} does not resolve (${code}${how}); check the host name`,
    unroutable: `${baseUrl.hostname} cannot be reached from this machine (${code}${how}); check the host and the network`,
    tls: tlsHint(code, baseUrl),
    'speaks-tls': `the server at ${baseUrl.host} speaks TLS (HTTPS); the URL starts with https://`,
  }[kind];
  return new ConfigError(setting, `${setting} is ${shown}, but ${found}.`);
}

function tlsHint(code: string, baseUrl: URL): string {
  if (
    code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' ||
    code === 'EPROTO'
  ) {
    return `the server at ${baseUrl.host} does not speak TLS (${code}); if it serves plain HTTP, the URL starts with http://`;
  }
  return `the TLS handshake with ${baseUrl.host} failed (${code}); its certificate is not trusted by this machine`;
}
