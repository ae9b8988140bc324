// The configured OpenID Connect providers: each one's discovery (openid-client, cached and
// refreshed; a provider whose discovery fails answers `oidc_unavailable` until it succeeds, and
// nothing else waits for it), its keys (jose's remote JWKS) and the one ID token verification both
// flows use. Knows nothing of HTTP or of accounts.
import { createHash, timingSafeEqual } from 'node:crypto';
import * as client from 'openid-client';
import { createRemoteJWKSet, errors as joseErrors, importPKCS8, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { OidcProviderConfig } from '../../config/accounts.js';
import type { Logger } from '../../logger.js';
import { AuthError } from '../shared/auth-error.js';

/** Asymmetric algorithms only: `none` and HMAC (which a public key could key) are never accepted. */
const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;
/** A discovery document older than this is fetched again (the cached one serves meanwhile). */
const REFRESH_MS = 12 * 60 * 60 * 1000;
/** After a failed discovery, the next try waits at least this long (so a dead issuer is not hammered). */
const RETRY_MS = 10_000;
const DISCOVERY_TIMEOUT_S = 5;
/** An ID token older than this (by its iat) is refused: native SDKs hand them over at once. */
const MAX_TOKEN_AGE_S = 60 * 60;
const CLOCK_TOLERANCE_S = 60;

/** What a verified ID token says of the person. */
export interface VerifiedIdentity {
  provider: string;
  subject: string;
  /** Lower-cased; undefined when the provider gave none (or one too long to be an address). */
  email: string | undefined;
  /** `email_verified` true, or the string "true" (Apple). */
  addressProven: boolean;
  /** What a new account's username and nickname are made from. */
  preferredName: string | undefined;
  /** The token's nonce as it carries it (raw, or the SHA-256 a provider configured sha256 carries). */
  tokenNonce: string;
  /** After this the token is refused anyway (its exp, or its iat plus the longest age, and the clock tolerance). */
  acceptableUntil: Date;
}

/** Why a token or a flow was refused (the audit row's detail; never answered). */
export class OidcRefusal extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = 'OidcRefusal';
  }
}

interface Discovered {
  configuration: client.Configuration;
  jwks: ReturnType<typeof createRemoteJWKSet>;
  algorithms: string[];
  at: number;
}

export class OidcProvider {
  private discovered: Discovered | undefined;
  private pending: Promise<Discovered> | undefined;
  private failedAt = 0;

  constructor(
    readonly config: OidcProviderConfig,
    private readonly deps: { logger: Logger; callbackUrl: string; insecure: boolean },
  ) {}

  get name(): string {
    return this.config.name;
  }

  /** The redirect URI registered at the provider: <AUTH_ISSUER>/api/v1/auth/oidc/<name>/callback. */
  get callbackUrl(): string {
    return this.deps.callbackUrl;
  }

  /** The discovered configuration; AuthError `oidc_unavailable` while discovery fails. */
  async configuration(): Promise<Discovered> {
    const now = Date.now();
    if (this.discovered && now - this.discovered.at < REFRESH_MS) return this.discovered;
    if (!this.discovered && now - this.failedAt < RETRY_MS) throw new AuthError('oidc_unavailable');
    this.pending ??= this.discover().finally(() => {
      this.pending = undefined;
    });
    try {
      return await this.pending;
    } catch {
      // A refresh that fails keeps serving the document it had.
      if (this.discovered) return this.discovered;
      throw new AuthError('oidc_unavailable');
    }
  }

  private async discover(): Promise<Discovered> {
    const { config, deps } = this;
    try {
      const secret = config.appleKey ? await appleClientSecret(config) : config.clientSecret;
      const configuration = await client.discovery(
        new URL(config.issuer),
        config.clientId,
        { redirect_uris: [deps.callbackUrl] },
        secret === undefined ? client.None() : client.ClientSecretPost(secret),
        { execute: deps.insecure ? [client.allowInsecureRequests] : [], timeout: DISCOVERY_TIMEOUT_S },
      );
      const metadata = configuration.serverMetadata();
      if (!metadata.jwks_uri) throw new Error('the discovery document has no jwks_uri');
      const offered = metadata.id_token_signing_alg_values_supported ?? ['RS256'];
      const algorithms = offered.filter((alg) => (ALLOWED_ALGORITHMS as readonly string[]).includes(alg));
      if (algorithms.length === 0) throw new Error(`no allowed ID token algorithm among ${offered.join(', ')}`);
      const discovered = { configuration, jwks: createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: DISCOVERY_TIMEOUT_S * 1000 }), algorithms, at: Date.now() };
      if (!this.discovered) deps.logger.info({ provider: config.name, issuer: config.issuer }, 'OpenID Connect provider discovered');
      this.discovered = discovered;
      this.failedAt = 0;
      return discovered;
    } catch (error) {
      this.failedAt = Date.now();
      deps.logger.error({ provider: config.name, issuer: config.issuer, err: { message: error instanceof Error ? error.message : String(error) } }, 'OpenID Connect provider discovery failed: it answers 2021 until discovery succeeds');
      throw error;
    }
  }

  /**
   * Verifies an ID token: its signature by a key of the provider's JWKS with an allowed asymmetric
   * algorithm, `iss` (the discovered issuer), `aud` (our client id; `azp` too when several
   * audiences), `exp`, `iat` (not in the future, at most an hour old) and the nonce: equal to
   * `nonce`, or to its hex SHA-256 when the provider is configured `sha256`. OidcRefusal otherwise.
   */
  async verifyIdToken(idToken: string, nonce: string, nonceForm: 'raw' | 'sha256' = this.config.nonce): Promise<VerifiedIdentity> {
    const { configuration, jwks, algorithms } = await this.configuration();
    const issuer = configuration.serverMetadata().issuer;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, jwks, {
        issuer,
        audience: this.config.clientId,
        algorithms,
        requiredClaims: ['sub', 'iat', 'exp'],
        maxTokenAge: MAX_TOKEN_AGE_S,
        clockTolerance: CLOCK_TOLERANCE_S,
      }));
    } catch (error) {
      if (error instanceof joseErrors.JOSEError) throw new OidcRefusal(refusalOf(error));
      throw error;
    }
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== this.config.clientId) throw new OidcRefusal('azp');
    const expected = nonceForm === 'sha256' ? createHash('sha256').update(nonce).digest('hex') : nonce;
    if (typeof payload.nonce !== 'string' || !sameText(payload.nonce, expected)) throw new OidcRefusal('nonce');
    return identityOf(this.name, payload);
  }
}

/** The provider-independent reason of a jose refusal (the audit detail). */
function refusalOf(error: InstanceType<typeof joseErrors.JOSEError>): string {
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `claim_${error.claim}`;
  if (error instanceof joseErrors.JWTExpired) return 'expired';
  if (error instanceof joseErrors.JWKSNoMatchingKey) return 'unknown_key';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature';
  if (error instanceof joseErrors.JWKSTimeout) return 'jwks_unreachable';
  return 'malformed';
}

function sameText(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

function identityOf(provider: string, payload: JWTPayload): VerifiedIdentity {
  const subject = String(payload.sub);
  if (subject.length === 0 || subject.length > 255) throw new OidcRefusal('claim_sub');
  const email = typeof payload.email === 'string' && payload.email.length <= 254 && EMAIL.test(payload.email) ? payload.email.toLowerCase() : undefined;
  const verified = payload.email_verified === true || payload.email_verified === 'true';
  const name = [payload.preferred_username, payload.given_name, payload.name].find((v): v is string => typeof v === 'string' && v.trim() !== '');
  const lastSecond = Math.min(Number(payload.exp), Number(payload.iat) + MAX_TOKEN_AGE_S) + CLOCK_TOLERANCE_S;
  return {
    provider,
    subject,
    email,
    addressProven: email !== undefined && verified,
    preferredName: name ?? email?.split('@')[0],
    tokenNonce: String(payload.nonce),
    acceptableUntil: new Date(lastSecond * 1000),
  };
}

/** Apple's client secret: an ES256 JWT of the team, signed with the Sign in with Apple key (a day's life; rediscovery renews it). */
async function appleClientSecret(config: OidcProviderConfig): Promise<string> {
  const { teamId, keyId, privateKey } = config.appleKey!;
  const key = await importPKCS8(privateKey, 'ES256');
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: keyId })
    .setIssuer(teamId)
    .setSubject(config.clientId)
    .setAudience('https://appleid.apple.com')
    .setIssuedAt()
    .setExpirationTime('1d')
    .sign(key);
}

/** The providers by name; discovery starts at once for each, in the background. */
export class OidcProviders {
  private readonly byName: Map<string, OidcProvider>;

  constructor(configs: readonly OidcProviderConfig[], deps: { logger: Logger; issuer: string; production: boolean }) {
    this.byName = new Map(
      configs.map((config) => [
        config.name,
        new OidcProvider(config, { logger: deps.logger, callbackUrl: `${deps.issuer}/api/v1/auth/oidc/${config.name}/callback`, insecure: !deps.production && new URL(config.issuer).protocol === 'http:' }),
      ]),
    );
  }

  /** Starts every provider's discovery; failures are logged, never thrown. */
  warmUp(): void {
    for (const provider of this.byName.values()) provider.configuration().catch(() => {});
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  /** AuthError `no_such_provider` for a name not in OIDC_PROVIDERS. */
  get(name: string): OidcProvider {
    const provider = this.byName.get(name);
    if (!provider) throw new AuthError('no_such_provider');
    return provider;
  }
}
