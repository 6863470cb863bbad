import { connect } from 'node:tls';
import { errors as undiciErrors } from 'undici';
import { errorCode } from './transport-failure.js';

/** How long the one handshake that tells a TLS server may take. */
const PROBE_MS = 2_000;

/**
 * Whether `error`, a request to a plain-HTTP base URL that had no answer yet, may be a TLS server
 * hanging up on bytes that are not a handshake: to a retry loop that looks like a dropped connection.
 */
export function mayBeTlsServer(baseUrl: URL, error: unknown): boolean {
  if (baseUrl.protocol !== 'http:') return false;
  const code = errorCode(error);
  return error instanceof undiciErrors.SocketError || code === 'ECONNRESET' || code === 'EPIPE';
}

/**
 * Whether the server at `baseUrl`'s host and port completes a TLS handshake, or answers one with a TLS
 * alert (it speaks TLS but wants something else). The certificate is not checked and nothing is sent
 * over the connection: it only tells what the server speaks.
 */
export function speaksTls(baseUrl: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const host = baseUrl.hostname.replace(/^\[(.*)\]$/, '$1');
    const socket = connect({ host, port: Number(baseUrl.port || 80), rejectUnauthorized: false });
    const done = (answer: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(false), PROBE_MS);
    socket.once('secureConnect', () => done(true));
    socket.once('error', (error) => done(/ALERT/.test(errorCode(error) ?? '')));
  });
}
