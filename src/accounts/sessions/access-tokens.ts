// Access tokens as JWTs (EdDSA over Ed25519, jose): what any other service can verify from the JWKS.
// This service still checks the session behind each one (jti: the session's current access id).
import { errors as joseErrors, jwtVerify, SignJWT, type CryptoKey, type JWTHeaderParameters, type JWTPayload } from 'jose';
import { AuthError } from '../shared/auth-error.js';
import { SIGNING_ALGORITHM, type SigningKeys } from './signing-keys.js';

export interface AccessClaims {
  iss: string;
  aud: string;
  /** The user id, as a string. */
  sub: string;
  /** The session's public id (GET /sessions). */
  sid: string;
  /** The session's current access id: a refresh replaces it, so the old token stops working here at once. */
  jti: string;
  roles: string[];
  iat: number;
  exp: number;
}

/** A JWT has three base64url parts; an opaque token of the previous release has two (`id.secret`). */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Longer than any token we sign by far (about 450 characters): refused unread. */
const MAX_TOKEN_LENGTH = 4096;

export function looksLikeJwt(token: string): boolean {
  return token.length <= MAX_TOKEN_LENGTH && JWT_SHAPE.test(token);
}

export interface AccessTokensDeps {
  keys: SigningKeys;
  issuer: string;
  audience: string;
  /** Seconds. */
  ttl: number;
  now: () => Date;
}

/**
 * @example
 * const tokens = new AccessTokens({ keys, issuer, audience, ttl: 7200, now })
 * const jwt = await tokens.sign({ sub: '42', sid, jti, roles: ['user'] }, now)
 * const claims = await tokens.verify(jwt) // AuthError invalid_access_token when it is not one of ours, or expired
 */
export class AccessTokens {
  constructor(private readonly deps: AccessTokensDeps) {}

  async sign(subject: { sub: string; sid: string; jti: string; roles: readonly string[] }, issuedAt: Date): Promise<string> {
    const { kid, privateKey } = await this.deps.keys.signer();
    const iat = Math.floor(issuedAt.getTime() / 1000);
    return new SignJWT({ sid: subject.sid, roles: [...subject.roles] })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid, typ: 'JWT' })
      .setIssuer(this.deps.issuer)
      .setAudience(this.deps.audience)
      .setSubject(subject.sub)
      .setJti(subject.jti)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.deps.ttl)
      .sign(privateKey);
  }

  /**
   * The claims of a token this service signed that has not expired: EdDSA only (never `none`, never
   * HS256 with the public key), a published kid, our issuer and audience, the claims we put in.
   */
  async verify(token: string): Promise<AccessClaims> {
    if (!looksLikeJwt(token)) throw new AuthError('invalid_access_token');
    try {
      const { payload } = await jwtVerify(token, (header: JWTHeaderParameters) => this.keyFor(header), {
        algorithms: [SIGNING_ALGORITHM],
        issuer: this.deps.issuer,
        audience: this.deps.audience,
        currentDate: this.deps.now(),
        requiredClaims: ['sub', 'jti', 'iat', 'exp', 'sid'],
      });
      return claimsOf(payload);
    } catch (error) {
      if (error instanceof AuthError) throw error;
      if (error instanceof joseErrors.JOSEError) throw new AuthError('invalid_access_token');
      throw error;
    }
  }

  private async keyFor(header: JWTHeaderParameters): Promise<CryptoKey> {
    const key = await this.deps.keys.verificationKey(header.kid);
    if (!key) throw new AuthError('invalid_access_token');
    return key;
  }
}

function claimsOf(payload: JWTPayload): AccessClaims {
  const { iss, aud, sub, jti, iat, exp } = payload;
  const { sid, roles } = payload as { sid?: unknown; roles?: unknown };
  if (
    typeof iss !== 'string' ||
    typeof aud !== 'string' ||
    typeof sub !== 'string' ||
    typeof jti !== 'string' ||
    typeof sid !== 'string' ||
    typeof iat !== 'number' ||
    typeof exp !== 'number' ||
    !Array.isArray(roles) ||
    !roles.every((r) => typeof r === 'string')
  ) {
    throw new AuthError('invalid_access_token');
  }
  return { iss, aud, sub, sid, jti, roles, iat, exp };
}
