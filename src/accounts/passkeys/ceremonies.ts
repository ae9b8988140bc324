// Passkeys: the WebAuthn ceremonies through @simplewebauthn/server, their single-use challenges and
// the stored credentials. Which check refused a login is returned for the audit, never answered.
// Knows nothing of HTTP.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type WebAuthnCredential,
} from '@simplewebauthn/server';
import { isoBase64URL, parseAuthenticatorData } from '@simplewebauthn/server/helpers';
import { and, count, desc, eq, isNull, lte, sql } from 'drizzle-orm';
import type { Config } from '../../config/index.js';
import type { Db } from '../../db/client.js';
import { users, webauthnChallenges, webauthnCredentials } from '../../db/schema.js';
import type { AuthKeys } from '../../secrets/auth-key.js';
import {
  MAX_CREDENTIAL_ID_BYTES,
  MAX_PASSKEYS_PER_USER,
  MAX_PUBLIC_KEY_BYTES,
  type AuthenticationResponseBody,
  type RegistrationResponseBody,
} from './contract.js';
import { AuthError } from '../shared/auth-error.js';
import type { User } from '../types.js';

export type WebAuthnConfig = NonNullable<Config['webauthn']>;

/** A challenge answers within this time or never. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** Registration challenges outstanding per user; asking for more drops the oldest. */
export const MAX_REGISTER_CHALLENGES_PER_USER = 5;
/** Login challenges outstanding in all (anyone may ask for one); more drop the oldest. */
export const MAX_LOGIN_CHALLENGES = 10_000;

export type StoredPasskey = typeof webauthnCredentials.$inferSelect;

/** Why a passkey login was refused: the audit row's detail. */
export type PasskeyLoginFailure = 'unknown_credential' | 'user_handle_mismatch' | 'invalid_assertion' | 'stale_counter';

export class PasskeyLoginError extends Error {
  constructor(
    readonly detail: PasskeyLoginFailure,
    readonly userId?: number,
  ) {
    super(`passkey login refused: ${detail}`);
    this.name = 'PasskeyLoginError';
  }
}

type Purpose = 'register' | 'login' | 'reauth';

export class Passkeys {
  constructor(
    private readonly deps: {
      db: Db;
      keys: AuthKeys;
      now: () => Date;
      webauthn: WebAuthnConfig;
      /** Default MAX_LOGIN_CHALLENGES (a test sets a small one). */
      maxLoginChallenges?: number;
    },
  ) {}

  /**
   * The WebAuthn user handle of a user: HMAC of its id (32 bytes), stable, so an authenticator keeps
   * one passkey per account and RP, and naming no one outside this service.
   */
  userHandle(userId: number): Uint8Array<ArrayBuffer> {
    return new Uint8Array(Buffer.from(this.deps.keys.digest('webauthn-user-handle', String(userId)), 'hex'));
  }

  async list(userId: number): Promise<StoredPasskey[]> {
    return this.deps.db
      .select()
      .from(webauthnCredentials)
      .where(eq(webauthnCredentials.userId, userId))
      .orderBy(desc(webauthnCredentials.createdAt), desc(webauthnCredentials.id))
      .limit(MAX_PASSKEYS_PER_USER + 10);
  }

  /** AuthError `passkey_limit` when the user holds MAX_PASSKEYS_PER_USER passkeys already. */
  async registrationOptions(user: User): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const { rpId, rpName } = this.deps.webauthn;
    const existing = await this.list(user.id);
    if (existing.length >= MAX_PASSKEYS_PER_USER) throw new AuthError('passkey_limit');
    const options = await generateRegistrationOptions({
      rpName,
      rpID: rpId,
      userName: user.username,
      userID: this.userHandle(user.id),
      userDisplayName: user.nickname,
      timeout: PASSKEY_CHALLENGE_TTL_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((c) => ({ id: c.credentialId, transports: splitTransports(c.transports) })),
      // Discoverable (a login names no user) and verified (a passkey is the whole sign-in, both factors).
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    await this.storeChallenge(options.challenge, 'register', user.id);
    return options;
  }

  /**
   * Verifies the browser's attestation against a registration challenge issued to this user (used up
   * here, whatever the outcome) and stores the passkey. AuthError `passkey_registration_refused`,
   * `passkey_exists` or `passkey_limit`.
   */
  async register(user: User, body: RegistrationResponseBody, name: string | undefined): Promise<StoredPasskey> {
    const { webauthn, db } = this.deps;
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response: body,
        expectedChallenge: (challenge) => this.consumeChallenge(challenge, 'register', user.id),
        expectedOrigin: webauthn.origins,
        expectedRPID: webauthn.rpId,
        requireUserVerification: true,
      });
    } catch {
      throw new AuthError('passkey_registration_refused');
    }
    if (!verified.verified) throw new AuthError('passkey_registration_refused');
    const { credential } = verified.registrationInfo;
    if (
      credential.publicKey.byteLength > MAX_PUBLIC_KEY_BYTES ||
      isoBase64URL.toBuffer(credential.id).byteLength > MAX_CREDENTIAL_ID_BYTES ||
      credential.id !== body.id
    ) {
      throw new AuthError('passkey_registration_refused');
    }
    const now = this.deps.now();
    const count = await this.count(user.id);
    const [stored] = await db
      .insert(webauthnCredentials)
      .values({
        userId: user.id,
        credentialId: credential.id,
        publicKey: isoBase64URL.fromBuffer(credential.publicKey),
        counter: credential.counter,
        transports: body.response.transports.join(','),
        name: name ?? `Passkey ${count + 1}`,
        createdAt: now,
      })
      .onConflictDoNothing({ target: webauthnCredentials.credentialId })
      .returning();
    if (!stored) throw new AuthError('passkey_exists');
    // Two registrations racing past the cap of the options: the later one is undone.
    if ((await this.count(user.id)) > MAX_PASSKEYS_PER_USER) {
      await db.delete(webauthnCredentials).where(eq(webauthnCredentials.id, stored.id));
      throw new AuthError('passkey_limit');
    }
    return stored;
  }

  async loginOptions(): Promise<PublicKeyCredentialRequestOptionsJSON> {
    // No allowCredentials: the authenticator offers the passkeys it holds for this RP.
    const options = await generateAuthenticationOptions({ rpID: this.deps.webauthn.rpId, timeout: PASSKEY_CHALLENGE_TTL_MS, userVerification: 'required' });
    await this.storeChallenge(options.challenge, 'login', null);
    return options;
  }

  /**
   * Options for a re-authentication of `user`: a challenge bound to the user, and the user's own
   * passkeys as the only ones allowed. AuthError `no_such_passkey` when the user has none.
   */
  async reauthOptions(user: User): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const mine = await this.list(user.id);
    if (mine.length === 0) throw new AuthError('no_such_passkey', 'this account has no passkey');
    const options = await generateAuthenticationOptions({
      rpID: this.deps.webauthn.rpId,
      timeout: PASSKEY_CHALLENGE_TTL_MS,
      userVerification: 'required',
      allowCredentials: mine.map((c) => ({ id: c.credentialId, transports: splitTransports(c.transports) })),
    });
    await this.storeChallenge(options.challenge, 'reauth', user.id);
    return options;
  }

  /**
   * Verifies an assertion against a login challenge (used up here) and the stored credential, and
   * moves the credential's counter on. Returns the user it signs in; PasskeyLoginError otherwise.
   * A ban is not checked here (SessionService.signIn answers it, after this proved the user).
   * With `reauthOf`, the challenge must be a re-authentication challenge of that user and the
   * credential one of that user's (another's answers as unknown).
   */
  async login(body: AuthenticationResponseBody, reauthOf?: number): Promise<{ user: User; passkey: StoredPasskey }> {
    const { db, webauthn } = this.deps;
    const [stored] = body.id === body.rawId ? await db.select().from(webauthnCredentials).where(eq(webauthnCredentials.credentialId, body.id)).limit(1) : [];
    if (!stored || (reauthOf !== undefined && stored.userId !== reauthOf)) throw new PasskeyLoginError('unknown_credential');
    const [purpose, challengeUser] = reauthOf === undefined ? (['login', null] as const) : (['reauth', reauthOf] as const);
    // A discoverable credential answers with the handle it was created for: it must be its owner's.
    const handle = body.response.userHandle;
    if (handle !== undefined && !this.deps.keys.matches('webauthn-user-handle', String(stored.userId), Buffer.from(isoBase64URL.toBuffer(handle)).toString('hex'))) {
      throw new PasskeyLoginError('user_handle_mismatch', stored.userId);
    }
    const credential: WebAuthnCredential = {
      id: stored.credentialId,
      publicKey: isoBase64URL.toBuffer(stored.publicKey),
      counter: stored.counter,
      transports: splitTransports(stored.transports),
    };
    let consumed: string | undefined;
    const verify = (expectedChallenge: (challenge: string) => boolean | Promise<boolean>, counter: number) =>
      verifyAuthenticationResponse({
        response: body,
        expectedChallenge,
        expectedOrigin: webauthn.origins,
        expectedRPID: webauthn.rpId,
        credential: { ...credential, counter },
        requireUserVerification: true,
      });
    let newCounter: number;
    try {
      const result = await verify(async (challenge) => {
        const ok = await this.consumeChallenge(challenge, purpose, challengeUser);
        if (ok) consumed = challenge;
        return ok;
      }, stored.counter);
      if (!result.verified) throw new PasskeyLoginError('invalid_assertion', stored.userId);
      newCounter = result.authenticationInfo.newCounter;
    } catch (error) {
      if (error instanceof PasskeyLoginError) throw error;
      throw new PasskeyLoginError(consumed !== undefined && (await this.signedWithStaleCounter(body, stored, consumed, verify)) ? 'stale_counter' : 'invalid_assertion', stored.userId);
    }
    // Conditional on the counter read: of two assertions racing with one counter value, one wins.
    const [moved] = await db
      .update(webauthnCredentials)
      .set({ counter: newCounter, lastUsedAt: this.deps.now() })
      .where(and(eq(webauthnCredentials.id, stored.id), eq(webauthnCredentials.counter, stored.counter)))
      .returning();
    if (!moved) throw new PasskeyLoginError('stale_counter', stored.userId);
    const [user] = await db.select().from(users).where(eq(users.id, stored.userId)).limit(1);
    if (!user) throw new PasskeyLoginError('unknown_credential');
    return { user, passkey: moved };
  }

  /** Removes one of the user's passkeys by its public id; AuthError `no_such_passkey` for another's or an unknown one. */
  async remove(userId: number, publicId: string): Promise<StoredPasskey> {
    if (!UUID.test(publicId)) throw new AuthError('no_such_passkey');
    const [removed] = await this.deps.db
      .delete(webauthnCredentials)
      .where(and(eq(webauthnCredentials.userId, userId), eq(webauthnCredentials.publicId, publicId.toLowerCase())))
      .returning();
    if (!removed) throw new AuthError('no_such_passkey');
    return removed;
  }

  /**
   * Whether a refused assertion carried a counter at or below the stored one (from an authenticator
   * that counts) and yet a valid signature over the challenge it used: a cloned credential, not noise.
   */
  private async signedWithStaleCounter(
    body: AuthenticationResponseBody,
    stored: StoredPasskey,
    challenge: string,
    verify: (expected: (c: string) => boolean, counter: number) => Promise<{ verified: boolean }>,
  ): Promise<boolean> {
    let counter: number;
    try {
      counter = parseAuthenticatorData(isoBase64URL.toBuffer(body.response.authenticatorData)).counter;
    } catch {
      return false;
    }
    if (!((counter > 0 || stored.counter > 0) && counter <= stored.counter)) return false;
    try {
      return (await verify((c) => c === challenge, 0)).verified;
    } catch {
      return false;
    }
  }

  private async count(userId: number): Promise<number> {
    const [row] = await this.deps.db.select({ n: count() }).from(webauthnCredentials).where(eq(webauthnCredentials.userId, userId));
    return row?.n ?? 0;
  }

  /** Keeps the challenge's digest for PASSKEY_CHALLENGE_TTL_MS, and the outstanding ones within their caps. */
  private async storeChallenge(challenge: string, purpose: Purpose, userId: number | null): Promise<void> {
    const { db, keys } = this.deps;
    const now = this.deps.now();
    await db.delete(webauthnChallenges).where(lte(webauthnChallenges.expiresAt, now));
    await db.insert(webauthnChallenges).values({
      digest: keys.digest('webauthn-challenge-digest', challenge),
      purpose,
      userId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_MS),
    });
    const mine = userId === null ? isNull(webauthnChallenges.userId) : eq(webauthnChallenges.userId, userId);
    const keep = userId === null ? (this.deps.maxLoginChallenges ?? MAX_LOGIN_CHALLENGES) : MAX_REGISTER_CHALLENGES_PER_USER;
    // The newest `keep` stay; older ones go (one statement, whatever the number of instances).
    const oldestKept = db.select({ id: webauthnChallenges.id }).from(webauthnChallenges).where(mine).orderBy(desc(webauthnChallenges.id)).offset(keep - 1).limit(1);
    await db.delete(webauthnChallenges).where(and(mine, sql`${webauthnChallenges.id} < (${oldestKept})`));
  }

  /** Uses up a live challenge of this purpose (and user): true once, false ever after. */
  private async consumeChallenge(challenge: string, purpose: Purpose, userId: number | null): Promise<boolean> {
    if (challenge.length > 128) return false;
    const used = await this.deps.db
      .delete(webauthnChallenges)
      .where(
        and(
          eq(webauthnChallenges.digest, this.deps.keys.digest('webauthn-challenge-digest', challenge)),
          eq(webauthnChallenges.purpose, purpose),
          userId === null ? isNull(webauthnChallenges.userId) : eq(webauthnChallenges.userId, userId),
          sql`${webauthnChallenges.expiresAt} > ${this.deps.now().toISOString()}::timestamptz`,
        ),
      )
      .returning({ id: webauthnChallenges.id });
    return used.length === 1;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function splitTransports(list: string): string[] {
  return list === '' ? [] : list.split(',');
}
