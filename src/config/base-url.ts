import { isIP } from 'node:net';
import { ConfigError } from '../errors.js';
import { ALLOW_INSECURE_VARIABLE, ENV_SETTING_NAMES } from './settings.js';

/**
 * The marketplace's base URL, refused when it would send passwords and tokens in clear text to a host
 * other than this machine. `names` are the settings as the user wrote them (`shops.north.base_url` in a
 * config file).
 */
export function validateBaseUrl(
  baseUrl: string,
  allowInsecure = false,
  names: { baseUrl: string; allowInsecure: string } = {
    baseUrl: ENV_SETTING_NAMES.baseUrl,
    allowInsecure: `${ALLOW_INSECURE_VARIABLE}=1`,
  },
): URL {
  const setting = names.baseUrl;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    // Not echoed: a mistyped URL may still carry a password, and there is nothing reliable to clean.
    throw new ConfigError(setting, `${setting} is not a valid URL: expected https://host/path.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(setting, `${setting} must be an https: URL, not ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new ConfigError(
      setting,
      `${setting} must not contain a user name or password; use the client id and password settings`,
    );
  }
  if (url.protocol === 'http:' && !allowInsecure && !isLoopback(url.hostname)) {
    throw new ConfigError(
      setting,
      `${setting} must use https: (got ${url.origin}); set ${names.allowInsecure} to allow clear text`,
    );
  }
  return url;
}

export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '0:0:0:0:0:0:0:1';
}
