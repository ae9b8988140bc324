// Sign-in with OpenID Connect providers as the account API offers it: which account an identity
// signs in to (or creates, or is refused), the native flow (an ID token from the provider's SDK), the
// web flow (authorization code + PKCE through openid-client, ending in a one-time code), linking and
// unlinking identities (a first password for an account a provider created: first-password.ts). Knows nothing of HTTP.
import { randomBytes } from 'node:crypto';
import { and, desc, eq, gt, lte, sql } from 'drizzle-orm';
import * as client from 'openid-client';
import type { Db } from '../../db/client.js';
import { oidcFlows, oidcIdentities, oidcLoginCodes, sessions, users } from '../../db/schema.js';
import type { AddressProof } from '../shared/address-proof.js';
import type { SignInMethod } from '../shared/sign-in-methods.js';
import { insertSelect, uniqueViolation } from '../../db/sql.js';
import type { Logger } from '../../logger.js';
import type { NoticeThrottle } from '../../mail/notice-throttle.js';
import type { AuthKeys } from '../../secrets/auth-key.js';
import type { AuditLog } from '../audit/log.js';
import type { SessionService } from '../sessions/service.js';
import { afterwards } from '../shared/after-action.js';
import { accountEventRows, userEvent } from '../shared/account-events.js';
import { AuthError } from '../shared/auth-error.js';
import { assertNotBanned } from '../shared/bans.js';
import type { FreshSession } from '../shared/fresh-session.js';
import { NO_PASSWORD } from '../passwords.js';
import type { Authenticated, SessionClient, TokenSet, User } from '../types.js';
import { ACCOUNT_ERRORS } from '../vocabulary.js';
import type { ProviderView } from './contract.js';
import { openFlowCookie, sealFlowCookie } from './flow-cookie.js';
import { nicknameFrom, usernameFrom } from './names.js';
import { OidcRefusal, type OidcProvider, type OidcProviders, type VerifiedIdentity } from './providers.js';
import { takeNonce } from './used-nonces.js';

/** A web flow must come back within this. */
export const FLOW_TTL_MS = 10 * 60 * 1000;
/** The one-time code a finished web sign-in hands the client app. */
export const LOGIN_CODE_TTL_MS = 60 * 1000;
/** Web flows under way at once, in all: beyond, starting one answers 429 until some finish or expire. */
export const MAX_LIVE_FLOWS = 10_000;
/** The cookie that binds a web flow to the browser that started it. */
export const FLOW_COOKIE = 'oidc_flow';

export type StoredIdentity = typeof oidcIdentities.$inferSelect;

export interface OidcServiceDeps {
  db: Db;
  keys: AuthKeys;
  now: () => Date;
  logger: Logger;
  audit: AuditLog;
  providers: OidcProviders;
  sessions: SessionService;
  fresh: FreshSession;
  /** OIDC_REDIRECT_URIS: where a web flow may return (exact match). */
  redirectUris: readonly string[];
  /** "An identity was linked / unlinked" notices; none without mail. */
  notices?: NoticeThrottle | undefined;
  /** The other features' ways to sign in (an account left with one of them may lose its last identity). */
  otherSignInMethods: readonly SignInMethod[];
  /** How the proof of an address is kept: a provider's verified e-mail counts as one. */
  addressProof: AddressProof;
}

/** Where a finished web flow sends the browser. */
export interface FlowResult {
  location: string;
}

export class OidcService {
  constructor(private readonly deps: OidcServiceDeps) {}

  get providerNames(): string[] {
    return this.deps.providers.names;
  }

  /** How `provider` returns to the callback (OIDC_<NAME>_RESPONSE_MODE); `query` for a name not configured. */
  responseMode(provider: string): 'query' | 'form_post' {
    return this.deps.providers.names.includes(provider) ? this.deps.providers.get(provider).config.responseMode : 'query';
  }

  /** GET /oidc/providers: each configured provider's name and label, nothing else of its configuration. */
  providerList(): ProviderView[] {
    return this.deps.providers.names.map((name) => ({ name, label: this.deps.providers.get(name).config.label }));
  }

  // ------------------------------------------------------------------ which account

  /**
   * The account an identity signs in to: the one it is linked to; else a new account when no account
   * holds its e-mail address; else AuthError `oidc_link_required` (a verified address an account
   * holds: never merged) or `oidc_email_unusable` (no address, or an unverified one an account holds).
   */
  private async accountOf(identity: VerifiedIdentity, client: SessionClient): Promise<User> {
    const { db, now } = this.deps;
    const [linked] = await db
      .select({ identityId: oidcIdentities.id, user: users })
      .from(oidcIdentities)
      .innerJoin(users, eq(users.id, oidcIdentities.userId))
      .where(and(eq(oidcIdentities.provider, identity.provider), eq(oidcIdentities.subject, identity.subject)))
      .limit(1);
    if (linked) {
      await db.update(oidcIdentities).set({ lastUsedAt: now(), email: identity.email ?? null }).where(eq(oidcIdentities.id, linked.identityId));
      return linked.user;
    }
    if (!identity.email) throw await this.refuse('oidc_email_unusable', identity, client, 'no_email');
    const [holder] = await db.select({ id: users.id }).from(users).where(eq(users.email, identity.email)).limit(1);
    // Never a silent merge, and never a match on an address the provider did not verify.
    if (holder) throw await this.refuse(identity.addressProven ? 'oidc_link_required' : 'oidc_email_unusable', identity, client, identity.addressProven ? 'email_held' : 'unverified_email_held', holder.id);
    return this.createAccount(identity, client);
  }

  private async refuse(kind: 'oidc_link_required' | 'oidc_email_unusable', identity: VerifiedIdentity, client: SessionClient, detail: string, userId?: number): Promise<AuthError> {
    await this.deps.audit.record({ type: 'oidc_login_failed', userId, detail: `${identity.provider}:${detail}`, ip: client.ip, userAgent: client.userAgent });
    return new AuthError(kind);
  }

  /** A new account without a password, its identity linked, in one statement (with auth.identity.linked). */
  private async createAccount(identity: VerifiedIdentity, client: SessionClient): Promise<User> {
    const { db, now } = this.deps;
    for (let attempt = 0; ; attempt++) {
      const at = now();
      const username = usernameFrom(identity.preferredName, attempt);
      const created = db.$with('created').as(
        db
          .insert(users)
          .values({ username, email: identity.email!, passwordHash: NO_PASSWORD, nickname: nicknameFrom(identity.preferredName, username), ...(identity.addressProven ? this.deps.addressProof.provedAtCreation(at) : {}), createdAt: at, updatedAt: at })
          .returning(),
      );
      const publicId = crypto.randomUUID();
      const linked = db
        .$with('linked', { userId: sql<number>`user_id`.as('user_id') })
        .as(
          insertSelect(
            oidcIdentities,
            { publicId, userId: sql`created.id`, provider: identity.provider, subject: identity.subject, email: identity.email ?? null, linkedAt: at, lastUsedAt: at },
            sql`from created returning user_id`,
          ),
        );
      try {
        const [user] = await db
          .with(created, linked, ...accountEventRows(db, at, identityEvent('auth.identity.linked', sql`select user_id from linked`, identity.provider, publicId)))
          .select()
          .from(created);
        await afterwards(this.deps.logger, 'oidc registration audit', () =>
          this.deps.audit.record({ type: 'oidc_registered', userId: user!.id, detail: `oidc:${identity.provider}`, ip: client.ip, userAgent: client.userAgent }),
        );
        return user!;
      } catch (error) {
        const constraint = uniqueViolation(error);
        if (constraint === 'users_username_lower_key' && attempt < 5) continue;
        // Raced by a registration with the address, or by the same identity's other sign-in.
        if (constraint === 'users_email_key') throw new AuthError('oidc_link_required');
        if (constraint === 'oidc_identities_provider_subject_key') throw new AuthError('oidc_refused', 'this identity is being signed in concurrently; retry');
        throw error;
      }
    }
  }

  /** The ban, the features' second step (TOTP: 2007) and the session, as after a password. */
  private async signInAs(user: User, provider: string, client: SessionClient): Promise<{ user: User; tokens: TokenSet }> {
    assertNotBanned(user, this.deps.now());
    return this.deps.sessions.afterFirstFactor(user, client, `oidc:${provider}`);
  }

  /** Verifies an ID token of `provider`; refusals are audited (oidc_login_failed, the check in its detail) and answer `oidc_refused`. */
  private async verified(provider: OidcProvider, idToken: string, nonce: string, client: SessionClient, userId?: number, nonceForm?: 'raw' | 'sha256'): Promise<VerifiedIdentity> {
    try {
      return await provider.verifyIdToken(idToken, nonce, nonceForm);
    } catch (error) {
      if (!(error instanceof OidcRefusal)) throw error;
      await this.deps.audit.record({ type: 'oidc_login_failed', userId, detail: `${provider.name}:${error.detail}`, ip: client.ip, userAgent: client.userAgent });
      throw new AuthError('oidc_refused');
    }
  }

  // ------------------------------------------------------------------ native flow

  /** POST /oidc/{provider}/id-token: the ID token a provider's SDK gave the app, and the nonce the app holds. */
  async signInWithIdToken(providerName: string, idToken: string, nonce: string, client: SessionClient): Promise<{ user: User; tokens: TokenSet }> {
    const provider = this.deps.providers.get(providerName);
    const identity = await this.verifiedOnce(provider, idToken, nonce, client);
    return this.signInAs(await this.accountOf(identity, client), provider.name, client);
  }

  /**
   * As verified(), and the token's nonce is taken: a keyed digest of it kept until the token could no
   * longer be accepted, so the same ID token (or another with its nonce) is refused with
   * `oidc_token_replayed` (audited `<provider>:replayed`) and changes nothing. In the database, as
   * every single-use secret here, so all instances share it.
   */
  private async verifiedOnce(provider: OidcProvider, idToken: string, nonce: string, client_: SessionClient, userId?: number): Promise<VerifiedIdentity> {
    const { db, keys, now } = this.deps;
    const identity = await this.verified(provider, idToken, nonce, client_, userId);
    if (!(await takeNonce(db, keys, identity, now()))) {
      await this.deps.audit.record({ type: 'oidc_login_failed', userId, detail: `${provider.name}:replayed`, ip: client_.ip, userAgent: client_.userAgent });
      throw new AuthError('oidc_token_replayed');
    }
    return identity;
  }

  // ------------------------------------------------------------------ web flow

  /** AuthError `oidc_redirect_uri` unless `redirectUri` is exactly one of OIDC_REDIRECT_URIS. */
  private checkRedirectUri(redirectUri: string): void {
    if (!this.deps.redirectUris.includes(redirectUri)) throw new AuthError('oidc_redirect_uri');
  }

  /**
   * Starts a web flow: the provider's authorization URL (PKCE S256, state, nonce) and the signed
   * cookie that binds the flow to this browser. `link`: the signed-in session that links (fresh).
   */
  async start(providerName: string, redirectUri: string, link?: Authenticated): Promise<{ url: string; cookie: string }> {
    const { db, keys, now } = this.deps;
    const provider = this.deps.providers.get(providerName);
    this.checkRedirectUri(redirectUri);
    if (link) this.deps.fresh.require(link);
    const { configuration } = await provider.configuration();
    const at = now();
    await db.delete(oidcFlows).where(lte(oidcFlows.expiresAt, at));
    const [live] = await db.select({ count: sql<number>`count(*)`.mapWith(Number) }).from(oidcFlows);
    if ((live?.count ?? 0) >= MAX_LIVE_FLOWS) throw new AuthError('rate_limited');
    const state = client.randomState();
    const nonce = client.randomNonce();
    const verifier = client.randomPKCECodeVerifier();
    await db.insert(oidcFlows).values({
      stateDigest: keys.digest('oidc-state-digest', state),
      provider: provider.name,
      userId: link?.user.id ?? null,
      sessionPublicId: link?.sessionPublicId ?? null,
      redirectUri,
      createdAt: at,
      expiresAt: new Date(at.getTime() + FLOW_TTL_MS),
    });
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: provider.callbackUrl,
      scope: provider.config.scopes.join(' '),
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...(provider.config.responseMode === 'form_post' ? { response_mode: 'form_post' } : {}),
    });
    return { url: url.href, cookie: sealFlowCookie(keys, { p: provider.name, s: state, v: verifier, n: nonce }) };
  }

  /**
   * The provider's redirect back: the browser's cookie must be the one its start set (same state),
   * the flow is used up (a replayed callback finds nothing), then openid-client checks the answer
   * (state, the RFC 9207 `iss` parameter, the code exchange with the PKCE verifier) and the ID token
   * is verified as the native flow's. Sign-in: the client app's redirect_uri gets a one-time `code`;
   * link: `linked=<provider>`. A refusal after the flow is known goes back to the app as `error=<code>`.
   */
  async callback(providerName: string, answer: URLSearchParams, cookie: string | undefined, client_: SessionClient): Promise<FlowResult> {
    const { db, keys, now } = this.deps;
    const provider = this.deps.providers.get(providerName);
    const state = answer.get('state') ?? '';
    const flowCookie = openFlowCookie(keys, cookie);
    const refusal = async (detail: string) => {
      await this.deps.audit.record({ type: 'oidc_login_failed', detail: `${provider.name}:${detail}`, ip: client_.ip, userAgent: client_.userAgent });
      return new AuthError('oidc_refused');
    };
    if (!flowCookie || flowCookie.p !== provider.name) throw await refusal('no_flow_cookie');
    if (state.length === 0 || state.length > 256 || state !== flowCookie.s) throw await refusal('state');
    const [flow] = await db
      .delete(oidcFlows)
      .where(and(eq(oidcFlows.stateDigest, keys.digest('oidc-state-digest', state)), eq(oidcFlows.provider, provider.name), gt(oidcFlows.expiresAt, now())))
      .returning();
    if (!flow) throw await refusal('flow_unknown_or_used');
    const back = (params: Record<string, string>): FlowResult => {
      const url = new URL(flow.redirectUri);
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      return { location: url.href };
    };
    try {
      const { configuration } = await provider.configuration();
      let tokens;
      try {
        // The redirect URI as registered (behind a proxy the request's own URL differs), with the
        // provider's parameters (from the query, or from the form it posted).
        const redirected = new URL(provider.callbackUrl);
        redirected.search = answer.toString();
        tokens = await client.authorizationCodeGrant(configuration, redirected, { pkceCodeVerifier: flowCookie.v, expectedState: flowCookie.s, expectedNonce: flowCookie.n, idTokenExpected: true });
      } catch (error) {
        throw await refusal(`exchange:${(error as { code?: string }).code ?? 'failed'}`);
      }
      const idToken = tokens.id_token;
      if (!idToken) throw await refusal('no_id_token');
      // Verified again by the same rules as a native token (signature by the JWKS, allowed algorithms).
      const identity = await this.verified(provider, idToken, flowCookie.n, client_, flow.userId ?? undefined, 'raw');
      if (flow.userId !== null) {
        // The session that started the link must still be alive (a logout or a password change since ends it).
        const [alive] = await db
          .select({ id: sessions.id })
          .from(sessions)
          .where(and(eq(sessions.publicId, flow.sessionPublicId ?? '00000000-0000-0000-0000-000000000000'), eq(sessions.userId, flow.userId)))
          .limit(1);
        if (!alive) throw await refusal('link_session_ended');
        await this.linkTo(flow.userId, flow.sessionPublicId, identity, client_);
        return back({ linked: provider.name });
      }
      const user = await this.accountOf(identity, client_);
      assertNotBanned(user, now());
      return back({ code: await this.issueLoginCode(user.id, provider.name) });
    } catch (error) {
      if (error instanceof AuthError) return back({ error: error.reason, error_code: String(codeOf(error)) });
      throw error;
    }
  }

  private async issueLoginCode(userId: number, provider: string): Promise<string> {
    const { db, keys, now } = this.deps;
    const at = now();
    await db.delete(oidcLoginCodes).where(lte(oidcLoginCodes.expiresAt, at));
    const code = randomBytes(32).toString('base64url');
    await db.insert(oidcLoginCodes).values({ digest: keys.digest('oidc-login-code-digest', code), userId, provider, createdAt: at, expiresAt: new Date(at.getTime() + LOGIN_CODE_TTL_MS) });
    return code;
  }

  /** POST /oidc/exchange: the one-time code (single use, 60 s) for the usual token set (or 2007 with TOTP on). */
  async exchange(code: string, client_: SessionClient): Promise<{ user: User; tokens: TokenSet }> {
    const { db, keys, now } = this.deps;
    const [used] = await db
      .delete(oidcLoginCodes)
      .where(and(eq(oidcLoginCodes.digest, keys.digest('oidc-login-code-digest', code)), gt(oidcLoginCodes.expiresAt, now())))
      .returning({ userId: oidcLoginCodes.userId, provider: oidcLoginCodes.provider });
    if (!used) throw new AuthError('oidc_code_refused');
    const [user] = await db.select().from(users).where(eq(users.id, used.userId)).limit(1);
    if (!user) throw new AuthError('oidc_code_refused');
    return this.signInAs(user, used.provider, client_);
  }

  // ------------------------------------------------------------------ linking

  /** POST /oidc/{provider}/link/id-token: links the token's identity to the caller (a fresh session). */
  async linkWithIdToken(auth: Authenticated, providerName: string, idToken: string, nonce: string, client_: SessionClient): Promise<StoredIdentity> {
    const provider = this.deps.providers.get(providerName);
    this.deps.fresh.require(auth);
    const identity = await this.verifiedOnce(provider, idToken, nonce, client_, auth.user.id);
    return this.linkTo(auth.user.id, auth.sessionPublicId, identity, client_);
  }

  private async linkTo(userId: number, sessionPublicId: string | null, identity: VerifiedIdentity, client_: SessionClient): Promise<StoredIdentity> {
    const { db, now } = this.deps;
    const [owner] = await db.select({ userId: oidcIdentities.userId }).from(oidcIdentities).where(and(eq(oidcIdentities.provider, identity.provider), eq(oidcIdentities.subject, identity.subject))).limit(1);
    if (owner && owner.userId !== userId) throw new AuthError('oidc_identity_taken');
    if (owner) {
      const [same] = await db.select().from(oidcIdentities).where(and(eq(oidcIdentities.provider, identity.provider), eq(oidcIdentities.subject, identity.subject))).limit(1);
      return same!;
    }
    const at = now();
    const publicId = crypto.randomUUID();
    const inserted = db.$with('inserted').as(
      db.insert(oidcIdentities).values({ publicId, userId, provider: identity.provider, subject: identity.subject, email: identity.email ?? null, linkedAt: at, lastUsedAt: at }).returning(),
    );
    let row: StoredIdentity | undefined;
    try {
      [row] = await db.with(inserted, ...accountEventRows(db, at, identityEvent('auth.identity.linked', sql`select user_id from inserted`, identity.provider, publicId))).select().from(inserted);
    } catch (error) {
      if (uniqueViolation(error)?.startsWith('oidc_identities_')) throw new AuthError('oidc_identity_taken');
      throw error;
    }
    const [user] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
    if (user) this.deps.notices?.notify({ kind: 'identity_linked', account: String(userId), to: user.email, at });
    await this.deps.audit.record({ type: 'identity_linked', userId, sessionId: sessionPublicId ?? undefined, detail: `oidc:${identity.provider}`, ip: client_.ip, userAgent: client_.userAgent });
    return row!;
  }

  /** GET /identities: the caller's identities, newest first. */
  list(auth: Authenticated): Promise<StoredIdentity[]> {
    return this.deps.db.select().from(oidcIdentities).where(eq(oidcIdentities.userId, auth.user.id)).orderBy(desc(oidcIdentities.id));
  }

  /**
   * DELETE /identities/{id}: refused (`oidc_last_method`) when the account would be left with no way
   * to sign in: no password, no other identity, none of the other features' ways; decided by the deleting statement itself.
   */
  async unlink(auth: Authenticated, publicId: string, client_: SessionClient): Promise<void> {
    const { db, now } = this.deps;
    const { user } = auth;
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(publicId)) throw new AuthError('no_such_identity');
    const [target] = await db.select().from(oidcIdentities).where(and(eq(oidcIdentities.publicId, publicId), eq(oidcIdentities.userId, user.id))).limit(1);
    if (!target) throw new AuthError('no_such_identity');
    const at = now();
    const otherWay = sql`(exists (select 1 from ${users} where ${users.id} = ${user.id} and ${users.passwordHash} <> ${NO_PASSWORD})
      ${sql.join(this.deps.otherSignInMethods.map((method) => sql`or ${method.heldBy(user.id)}`), sql` `)}
      or exists (select 1 from ${oidcIdentities} where ${oidcIdentities.userId} = ${user.id} and ${oidcIdentities.id} <> ${target.id}))`;
    const gone = db.$with('gone').as(db.delete(oidcIdentities).where(and(eq(oidcIdentities.id, target.id), otherWay)).returning({ userId: oidcIdentities.userId }));
    const [removed] = await db.with(gone, ...accountEventRows(db, at, identityEvent('auth.identity.unlinked', sql`select user_id from gone`, target.provider, target.publicId))).select().from(gone);
    if (!removed) throw new AuthError('oidc_last_method');
    this.deps.notices?.notify({ kind: 'identity_unlinked', account: String(user.id), to: user.email, at });
    await this.deps.audit.record({ type: 'identity_unlinked', userId: user.id, sessionId: auth.sessionPublicId, detail: `oidc:${target.provider}`, ip: client_.ip, userAgent: client_.userAgent });
  }
}

function identityEvent(type: 'auth.identity.linked' | 'auth.identity.unlinked', from: ReturnType<typeof sql>, provider: string, identityId: string) {
  return userEvent(type, from, { provider: sql`${provider}::text`, identityId: sql`${identityId}::text` });
}

function codeOf(error: AuthError): number {
  return ACCOUNT_ERRORS[error.reason].code;
}
