import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { GrantType, SimCredentials } from './types.js';

/** buy: client_credentials; personal: password grant; refreshed: issued by the refresh grant. */
export type TokenKind = 'buy' | 'personal' | 'refreshed';

export interface TokenGrant {
  status: 200;
  grant: GrantType;
  body: Record<string, string | number>;
}

export interface TokenRefusal {
  status: 400 | 401;
  body: { error: string; error_description: string };
}

export type TokenCheck = { ok: true; kind: TokenKind } | { ok: false; reason: string };

const PRUNE_ABOVE = 10_000;

function opaqueToken(): string {
  return randomBytes(24).toString('base64url');
}

function same(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function refuse(status: 400 | 401, error: string, description: string): TokenRefusal {
  return { status, body: { error, error_description: description } };
}

/** The OAuth token endpoint's state: issued access tokens with their expiry, live refresh tokens. */
export class TokenIssuer {
  private readonly access = new Map<string, { kind: TokenKind; expiresAt: number }>();
  private readonly refresh = new Set<string>();
  /** Every token ever issued, access and refresh: what a client must never let out. */
  private readonly everIssued: string[] = [];

  constructor(
    private readonly credentials: SimCredentials,
    private readonly expiresInSeconds: number,
  ) {}

  grant(params: Readonly<Record<string, string>>): TokenGrant | TokenRefusal {
    const grantType = params.grant_type;
    if (!grantType) return refuse(400, 'invalid_request', 'grant_type is required');
    if (grantType !== 'client_credentials' && grantType !== 'password' && grantType !== 'refresh_token') {
      return refuse(400, 'unsupported_grant_type', `grant_type "${grantType}" is not supported`);
    }
    if (
      !same(params.client_id, this.credentials.clientId) ||
      !same(params.client_secret, this.credentials.clientSecret)
    ) {
      return refuse(401, 'invalid_client', 'client authentication failed');
    }
    if (grantType === 'client_credentials') return this.issue(grantType, 'buy', 'buy');
    if (grantType === 'password') {
      if (!params.username || !params.password) {
        return refuse(400, 'invalid_request', 'username and password are required for the password grant');
      }
      if (
        !same(params.username, this.credentials.username) ||
        !same(params.password, this.credentials.password)
      ) {
        return refuse(400, 'invalid_grant', 'the resource owner credentials are invalid');
      }
      return this.issue(grantType, 'personal', 'buy sell');
    }
    const refreshToken = params.refresh_token;
    if (!refreshToken)
      return refuse(400, 'invalid_request', 'refresh_token is required for the refresh_token grant');
    // Rotation: a refresh token works once.
    if (!this.refresh.delete(refreshToken)) {
      return refuse(400, 'invalid_grant', 'the refresh token is invalid, expired or already used');
    }
    return this.issue(grantType, 'refreshed', undefined);
  }

  check(authorization: string | undefined): TokenCheck {
    const match = authorization === undefined ? null : /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) return { ok: false, reason: 'missing bearer token' };
    const token = this.access.get(match[1] as string);
    if (!token) return { ok: false, reason: 'unknown access token' };
    if (Date.now() >= token.expiresAt) return { ok: false, reason: 'access token expired' };
    return { ok: true, kind: token.kind };
  }

  issued(): string[] {
    return [...this.everIssued];
  }

  private issue(grant: GrantType, kind: TokenKind, scope: string | undefined): TokenGrant {
    if (this.access.size > PRUNE_ABOVE) this.pruneExpired();
    const accessToken = opaqueToken();
    this.everIssued.push(accessToken);
    this.access.set(accessToken, { kind, expiresAt: Date.now() + this.expiresInSeconds * 1000 });
    // The spec says expires_in is an integer; a fractional test lifetime is reported rounded up,
    // so a client also meets the 401 of a token that died earlier than announced.
    const body: Record<string, string | number> = {
      access_token: accessToken,
      token_type: 'bearer',
      expires_in: Math.ceil(this.expiresInSeconds),
    };
    if (scope !== undefined) body.scope = scope;
    if (kind !== 'buy') {
      const refreshToken = opaqueToken();
      this.everIssued.push(refreshToken);
      this.refresh.add(refreshToken);
      body.refresh_token = refreshToken;
    }
    return { status: 200, grant, body };
  }

  private pruneExpired(): void {
    const now = Date.now();
    for (const [token, { expiresAt }] of this.access) if (now >= expiresAt) this.access.delete(token);
  }
}
