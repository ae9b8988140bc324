// The account API: token lifetimes, login and reset budgets, rate limits and outgoing mail, and
// passkeys' relying party (WebAuthn: the RP ID and the page origins whose ceremonies it accepts).
import { z } from 'zod';
import { int, optionalString, originList } from './env.js';
import { serverVariables } from './server.js';

/**
 * CORS_ORIGINS: comma-separated origins (`https://app.example.com`, `http://localhost:5173`) allowed
 * to call /api/* from a browser, or `*`. An entry must be an origin exactly as a browser sends it:
 * scheme, host and port only, no path or trailing slash.
 */
const corsOrigins = originList(8192, 100, ['*']).superRefine((entries, ctx) => {
  if (entries.includes('*') && entries.length > 1) ctx.addIssue({ code: 'custom', message: '* allows every origin: list origins or give * alone' });
});

export const accountsVariables = {
  ACCESS_TOKEN_TTL: int(7200, 1),
  REFRESH_TOKEN_TTL: int(2592000, 1),
  RATE_LIMIT_AUTH_PER_MIN: int(10),
  RATE_LIMIT_REFRESH_PER_MIN: int(60),
  RATE_LIMIT_API_PER_MIN: int(300),
  TRUST_PROXY: z.enum(['none', 'fly', 'xff']).default('none'),
  LOGIN_FAILURES_PER_ACCOUNT: int(10),
  LOGIN_FAILURE_WINDOW_S: int(900, 1, 86_400),
  REFRESH_REUSE_GRACE_S: int(10, 0, 3600),
  PASSWORD_HASH_MAX_WAIT_MS: int(2000, 1, 60_000),
  // A session that signed in or re-authenticated (POST /reauth) within this many seconds may add a
  // passkey, turn TOTP on or change the address.
  REAUTH_WINDOW_S: int(300, 30, 86_400),
  // Per client address and hour (docs/account-api.md, "Who can block a password reset"); 0 disables.
  PASSWORD_RESET_REQUESTS_PER_SOURCE: int(10, 0, 10_000),
  PASSWORD_RESET_GUESSES_PER_SOURCE: int(10, 0, 10_000),
  REDIS_URL: optionalString,
  AUTH_EVENTS_RETENTION_DAYS: int(90, 1, 36500),
  // smtp:// or smtps://, credentials in the URL (never logged). Unset: no mail (see Config['mail']).
  SMTP_URL: optionalString.pipe(
    z
      .string()
      .refine((v) => URL.canParse(v) && ['smtp:', 'smtps:'].includes(new URL(v).protocol), 'must be an smtp:// or smtps:// URL')
      .optional(),
  ),
  MAIL_FROM: z.string().trim().min(3).max(254).default('chat-backend <no-reply@localhost>'),
  // Browsers on these origins may call /api/*; unset: no CORS headers at all.
  CORS_ORIGINS: optionalString.pipe(corsOrigins.optional()),
  // How long a browser may keep a preflight's answer (Chromium keeps at most 7200 s).
  CORS_MAX_AGE_S: int(7200, 0, 86_400),
  // The `iss` of access tokens (JWTs); unset: https://<FLY_APP_NAME>.fly.dev on Fly.io, else
  // http://localhost:<PORT> outside production. Required in production elsewhere than on Fly.io.
  AUTH_ISSUER: optionalString.pipe(z.string().max(256).optional()),
  // Set by Fly.io on every machine of an app: the app's public base URL is https://<name>.fly.dev.
  FLY_APP_NAME: optionalString.pipe(
    z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be a Fly.io app name')
      .optional(),
  ),
  // The `aud` of access tokens: what a service verifying them expects.
  AUTH_AUDIENCE: z.string().trim().min(1).max(256).default('chat-backend'),
  // A new signing key every this many days (published one access-token lifetime before it signs).
  AUTH_KEY_ROTATION_DAYS: int(30, 1, 3650),
  // The issuer an authenticator app shows beside a TOTP account (the otpauth URL's issuer).
  TOTP_ISSUER: z.string().trim().min(1).max(64).regex(/^[^:]+$/, 'must not contain ":"').default('chat-backend'),
};

// NODE_ENV belongs to the server slice; read here because production refuses CORS_ORIGINS=*.
/** Its part of .env.example: the area's title, the headings of its parts, and the defaults that depend on other variables. */
export const accountsEnvDocs = {
  title: 'The account API: tokens, budgets, rate limits, mail',
  sections: {
    WEBAUTHN_RP_ID: 'Passkeys (WebAuthn): the relying party and the origins of the pages that sign in',
    OIDC_PROVIDERS: 'Sign in with OpenID Connect providers; per provider <NAME>: OIDC_<NAME>_ISSUER, OIDC_<NAME>_CLIENT_ID, OIDC_<NAME>_CLIENT_SECRET, OIDC_<NAME>_SCOPES (default "email profile"), OIDC_<NAME>_NONCE (raw or sha256), OIDC_<NAME>_LABEL (the name sign-in buttons show), OIDC_<NAME>_RESPONSE_MODE (query or form_post; apple: form_post)',
  },
  notes: {
    AUTH_ISSUER: 'https://<FLY_APP_NAME>.fly.dev on Fly.io, else http://localhost:<PORT> outside production (required in production elsewhere)',
    WEBAUTHN_RP_ID: 'localhost outside production; in production passkeys are off until it is set',
    WEBAUTHN_ORIGINS: 'http://localhost:<PORT> outside production; required with WEBAUTHN_RP_ID in production',
  },
};

const accountApiConfig = z
  .object({ NODE_ENV: serverVariables.NODE_ENV, PORT: serverVariables.PORT, ...accountsVariables })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV === 'production' && env.CORS_ORIGINS?.includes('*')) {
      ctx.addIssue({ code: 'custom', path: ['CORS_ORIGINS'], message: 'must list the origins when NODE_ENV=production (* lets any web page call the account API)' });
    }
    if (env.AUTH_KEY_ROTATION_DAYS * 86_400 < 2 * env.ACCESS_TOKEN_TTL) {
      ctx.addIssue({ code: 'custom', path: ['AUTH_KEY_ROTATION_DAYS'], message: 'must be at least two access-token lifetimes (ACCESS_TOKEN_TTL), so a key signs for some time between its lead and its successor' });
    }
    if (env.NODE_ENV === 'production' && env.AUTH_ISSUER === undefined && env.FLY_APP_NAME === undefined) {
      // http://localhost:<PORT> differs between instances on other ports, and each would refuse the others' tokens (1002).
      ctx.addIssue({
        code: 'custom',
        path: ['AUTH_ISSUER'],
        message: "must be set when NODE_ENV=production (the service's public base URL, https://chat.example.com; on Fly.io FLY_APP_NAME gives it), one value for every instance",
      });
    }
    if (env.REDIS_URL !== undefined && !/^rediss?:\/\//.test(env.REDIS_URL)) {
      ctx.addIssue({ code: 'custom', path: ['REDIS_URL'], message: 'must be a redis:// or rediss:// URL' });
    }
  })
  .transform((env) => ({
    auth: {
      accessTokenTtl: env.ACCESS_TOKEN_TTL,
      refreshTokenTtl: env.REFRESH_TOKEN_TTL,
      /** auth_events rows older than this are pruned. */
      eventsRetentionDays: env.AUTH_EVENTS_RETENTION_DAYS,
      /** Seconds after its rotation during which a refresh token presented again is a lost race, not reuse. */
      refreshReuseGraceS: env.REFRESH_REUSE_GRACE_S,
      /** Failed logins and password changes allowed per account and window; 0 disables. */
      failuresPerAccount: env.LOGIN_FAILURES_PER_ACCOUNT,
      failureWindowS: env.LOGIN_FAILURE_WINDOW_S,
      /** Beyond this expected wait for an argon2 slot a request answers 503 instead of queueing. */
      hashMaxWaitMs: env.PASSWORD_HASH_MAX_WAIT_MS,
      /** Seconds after its sign-in or re-authentication during which a session counts as fresh. */
      reauthWindowS: env.REAUTH_WINDOW_S,
      /** `iss` of access tokens. */
      issuer: env.AUTH_ISSUER ?? (env.FLY_APP_NAME !== undefined ? `https://${env.FLY_APP_NAME}.fly.dev` : `http://localhost:${env.PORT}`),
      /** `aud` of access tokens. */
      audience: env.AUTH_AUDIENCE,
      /** Days between signing keys. */
      keyRotationDays: env.AUTH_KEY_ROTATION_DAYS,
      /** The issuer of TOTP accounts in authenticator apps. */
      totpIssuer: env.TOTP_ISSUER,
    },
    /** Per-client budgets of the password reset endpoints, per hour; 0 disables. */
    passwordReset: {
      /** POST /password/forgot requests per client address (at most 3 of them for one e-mail address). */
      requestsPerSource: env.PASSWORD_RESET_REQUESTS_PER_SOURCE,
      /** POST /password/reset failures (wrong codes) per client address. */
      guessesPerSource: env.PASSWORD_RESET_GUESSES_PER_SOURCE,
    },
    rateLimit: {
      authPerMin: env.RATE_LIMIT_AUTH_PER_MIN,
      refreshPerMin: env.RATE_LIMIT_REFRESH_PER_MIN,
      apiPerMin: env.RATE_LIMIT_API_PER_MIN,
      /** Where the client address of a rate limit (and of a session) comes from. */
      trustProxy: env.TRUST_PROXY,
      /** Counters shared by every instance in this Redis; undefined: in this process's memory. */
      redisUrl: env.REDIS_URL,
    },
    /**
     * Outgoing mail (password reset codes, password-changed notices). Without an SMTP URL, messages
     * go to the log at warn outside production; in production the password reset endpoints answer 1004.
     */
    mail: { smtpUrl: env.SMTP_URL, from: env.MAIL_FROM },
    /** Browsers allowed to call /api/* (CORS_ORIGINS); undefined: no CORS headers. */
    cors: env.CORS_ORIGINS && env.CORS_ORIGINS.length > 0 ? { origins: env.CORS_ORIGINS, maxAgeS: env.CORS_MAX_AGE_S } : undefined,
  }));

/** A DNS name as WebAuthn takes an RP ID: lower-case labels, no scheme, port, path or trailing dot; not an IP address. */
const RP_ID = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const isRpId = (value: string) => RP_ID.test(value) && !IPV4.test(value);

/** Hosts a browser treats as a secure context over plain http (so WebAuthn works there). */
function isLocalhost(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

const webauthnVariables = {
  // Unset: `localhost` outside production; in production passkeys are off until it is set.
  WEBAUTHN_RP_ID: optionalString.pipe(
    z
      .string()
      .max(253)
      .refine(isRpId, 'must be a domain name such as chat.example.com (lower case; no scheme, port or path; not an IP address)')
      .optional(),
  ),
  // The name authenticators show beside the passkey.
  WEBAUTHN_RP_NAME: z.string().trim().min(1).max(64).default('chat-backend'),
  // Unset: http://localhost:<PORT> outside production (with the default RP ID); required with WEBAUTHN_RP_ID in production.
  WEBAUTHN_ORIGINS: optionalString.pipe(originList(4096, 20).optional()),
};

/** Passkeys' variables, checked against each other as their own part of the slice. */
const webauthnConfig = z
  .object({ NODE_ENV: serverVariables.NODE_ENV, PORT: serverVariables.PORT, ...webauthnVariables })
  .superRefine((env, ctx) => {
    const production = env.NODE_ENV === 'production';
    // A bad RP ID is reported by its own rule (refinements do not abort): nothing to check against.
    if (env.WEBAUTHN_RP_ID !== undefined && !isRpId(env.WEBAUTHN_RP_ID)) return;
    const rpId = env.WEBAUTHN_RP_ID ?? (production ? undefined : 'localhost');
    if (rpId === undefined) {
      if (env.WEBAUTHN_ORIGINS !== undefined) ctx.addIssue({ code: 'custom', path: ['WEBAUTHN_RP_ID'], message: 'must be set when WEBAUTHN_ORIGINS is set' });
      return;
    }
    if (env.WEBAUTHN_ORIGINS === undefined && (production || rpId !== 'localhost')) {
      ctx.addIssue({
        code: 'custom',
        path: ['WEBAUTHN_ORIGINS'],
        message: production ? 'must be set when WEBAUTHN_RP_ID is set and NODE_ENV=production (the https origins of the pages that sign in)' : 'must be set when WEBAUTHN_RP_ID is not localhost',
      });
      return;
    }
    for (const origin of env.WEBAUTHN_ORIGINS ?? []) {
      if (!URL.canParse(origin)) continue;
      const { protocol, hostname } = new URL(origin);
      if (hostname !== rpId && !hostname.endsWith(`.${rpId}`)) {
        ctx.addIssue({ code: 'custom', path: ['WEBAUTHN_ORIGINS'], message: `"${origin.slice(0, 100)}": its host must be ${rpId} (WEBAUTHN_RP_ID) or a subdomain of it` });
      } else if (protocol === 'http:' && (production || !isLocalhost(hostname))) {
        ctx.addIssue({ code: 'custom', path: ['WEBAUTHN_ORIGINS'], message: `"${origin.slice(0, 100)}": must be https (browsers allow WebAuthn over http only on localhost${production ? ', which production does not accept' : ''})` });
      }
    }
  })
  .transform((env) => {
    const rpId = env.WEBAUTHN_RP_ID ?? (env.NODE_ENV === 'production' ? undefined : 'localhost');
    return {
      /** Passkeys (/api/v1/auth/passkeys/*); undefined: off (production without WEBAUTHN_RP_ID). */
      webauthn:
        rpId === undefined
          ? undefined
          : { rpId, rpName: env.WEBAUTHN_RP_NAME, origins: env.WEBAUTHN_ORIGINS && env.WEBAUTHN_ORIGINS.length > 0 ? env.WEBAUTHN_ORIGINS : [`http://localhost:${env.PORT}`] },
    };
  });

/** A provider's name in OIDC_PROVIDERS: lower case, as its routes and `auth_method` (`oidc:<name>`) say it. */
export const OIDC_PROVIDER_NAME = /^[a-z][a-z0-9]{0,14}$/;
/** Providers one deployment may name. */
export const MAX_OIDC_PROVIDERS = 10;
/** What the per-provider variables take: the provider's name in upper case, OIDC_<NAME>_<PART>. */
type OidcPart = 'ISSUER' | 'CLIENT_ID' | 'CLIENT_SECRET' | 'SCOPES' | 'NONCE' | 'LABEL' | 'RESPONSE_MODE';

const oidcVariables = {
  // Comma-separated provider names (google,apple,acme); each has OIDC_<NAME>_ISSUER and _CLIENT_ID. Unset: no provider sign-in.
  OIDC_PROVIDERS: optionalString.pipe(z.string().max(200).optional()),
  // Comma-separated return addresses of the client apps (exact match) the web flow may redirect to.
  OIDC_REDIRECT_URIS: optionalString.pipe(z.string().max(8192).optional()),
  // Apple's client secret is a JWT the service signs (ES256) with the key Apple issued: its team, key id and PEM.
  OIDC_APPLE_TEAM_ID: optionalString.pipe(z.string().regex(/^[A-Z0-9]{10}$/, 'must be the 10-character Apple team id').optional()),
  OIDC_APPLE_KEY_ID: optionalString.pipe(z.string().regex(/^[A-Z0-9]{10}$/, 'must be the 10-character id of the Sign in with Apple key').optional()),
  OIDC_APPLE_PRIVATE_KEY: optionalString.pipe(z.string().max(4096).optional()),
};

export interface OidcProviderConfig {
  name: string;
  /** The issuer exactly as the provider's discovery document and ID tokens give it. */
  issuer: string;
  clientId: string;
  /** client_secret_post / basic; undefined for Apple's signed secret or a public client. */
  clientSecret: string | undefined;
  /** Apple: the client secret is a JWT signed with this key (team, key id, PKCS#8 PEM). */
  appleKey: { teamId: string; keyId: string; privateKey: string } | undefined;
  scopes: string[];
  /** `sha256`: the ID token carries the hex SHA-256 of the nonce the client holds (Apple's SDKs). */
  nonce: 'raw' | 'sha256';
  /** What a "Sign in with …" button says (GET /oidc/providers): OIDC_<NAME>_LABEL, else the name capitalised. */
  label: string;
  /** How the provider returns to the callback: `query` (a GET), or `form_post` (a POST of a form: Apple's, with the name or email scope). */
  responseMode: 'query' | 'form_post';
}

/** OIDC_<NAME>_<PART> of a provider. */
const oidcVariable = (name: string, part: OidcPart) => `OIDC_${name.toUpperCase()}_${part}`;
const oidcNames = (value: string | undefined) => [...new Set((value ?? '').split(',').map((v) => v.trim().toLowerCase()).filter(Boolean))];

/** Sign-in with OpenID Connect providers: the names, the per-provider variables (read by name), the allowed return addresses. */
const oidcConfig = z
  .looseObject({ NODE_ENV: serverVariables.NODE_ENV, ...oidcVariables })
  .superRefine((env, ctx) => {
    const raw = env as Record<string, unknown>;
    const text = (key: string) => (typeof raw[key] === 'string' && (raw[key]).trim() !== '' ? (raw[key]).trim() : undefined);
    const names = oidcNames(env.OIDC_PROVIDERS);
    if (names.length > MAX_OIDC_PROVIDERS) ctx.addIssue({ code: 'custom', path: ['OIDC_PROVIDERS'], message: `at most ${MAX_OIDC_PROVIDERS} providers` });
    for (const name of names) {
      if (!OIDC_PROVIDER_NAME.test(name)) {
        ctx.addIssue({ code: 'custom', path: ['OIDC_PROVIDERS'], message: `"${name.slice(0, 40)}": a provider name is a letter and then at most 14 letters or digits` });
        continue;
      }
      const issuer = text(oidcVariable(name, 'ISSUER'));
      if (issuer === undefined || !URL.canParse(issuer) || !['https:', 'http:'].includes(new URL(issuer).protocol) || issuer.length > 512) {
        ctx.addIssue({ code: 'custom', path: [oidcVariable(name, 'ISSUER')], message: `must be the provider's issuer URL (https://accounts.google.com) for ${name} in OIDC_PROVIDERS` });
      } else if (new URL(issuer).protocol === 'http:' && env.NODE_ENV === 'production') {
        ctx.addIssue({ code: 'custom', path: [oidcVariable(name, 'ISSUER')], message: 'must be https when NODE_ENV=production' });
      }
      const clientId = text(oidcVariable(name, 'CLIENT_ID'));
      if (clientId === undefined || clientId.length > 512) ctx.addIssue({ code: 'custom', path: [oidcVariable(name, 'CLIENT_ID')], message: `must be the client id registered at ${name} (at most 512 characters)` });
      if ((text(oidcVariable(name, 'CLIENT_SECRET'))?.length ?? 0) > 2048) ctx.addIssue({ code: 'custom', path: [oidcVariable(name, 'CLIENT_SECRET')], message: 'at most 2048 characters' });
      const nonce = text(oidcVariable(name, 'NONCE'));
      if (nonce !== undefined && nonce !== 'raw' && nonce !== 'sha256') ctx.addIssue({ code: 'custom', path: [oidcVariable(name, 'NONCE')], message: 'must be raw or sha256' });
      const responseMode = text(oidcVariable(name, 'RESPONSE_MODE'));
      if (responseMode !== undefined && responseMode !== 'query' && responseMode !== 'form_post') ctx.addIssue({ code: 'custom', path: [oidcVariable(name, 'RESPONSE_MODE')], message: 'must be query or form_post' });
      const label = text(oidcVariable(name, 'LABEL'));
      if (label !== undefined && (label.length > 40 || /[\p{Cc}\p{Cf}]/u.test(label))) ctx.addIssue({ code: 'custom', path: [oidcVariable(name, 'LABEL')], message: 'at most 40 characters, no control characters' });
      const scopes = text(oidcVariable(name, 'SCOPES'));
      if (scopes !== undefined && (scopes.length > 512 || !/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(scopes))) {
        ctx.addIssue({ code: 'custom', path: [oidcVariable(name, 'SCOPES')], message: 'must be scopes separated by single spaces (openid is always asked)' });
      }
      if (name === 'apple' && text(oidcVariable(name, 'CLIENT_SECRET')) === undefined && (!env.OIDC_APPLE_TEAM_ID || !env.OIDC_APPLE_KEY_ID || !env.OIDC_APPLE_PRIVATE_KEY)) {
        ctx.addIssue({ code: 'custom', path: ['OIDC_APPLE_PRIVATE_KEY'], message: 'apple needs OIDC_APPLE_TEAM_ID, OIDC_APPLE_KEY_ID and OIDC_APPLE_PRIVATE_KEY (or OIDC_APPLE_CLIENT_SECRET)' });
      }
    }
    const uris = (env.OIDC_REDIRECT_URIS ?? '').split(',').map((v) => v.trim()).filter(Boolean);
    if (uris.length > 50) ctx.addIssue({ code: 'custom', path: ['OIDC_REDIRECT_URIS'], message: 'at most 50 addresses' });
    for (const uri of uris) {
      const url = URL.canParse(uri) ? new URL(uri) : undefined;
      if (!url || url.hash !== '' || url.username !== '' || url.password !== '' || ['javascript:', 'data:', 'file:', 'blob:'].includes(url.protocol)) {
        ctx.addIssue({ code: 'custom', path: ['OIDC_REDIRECT_URIS'], message: `"${uri.slice(0, 100)}": must be an absolute URL without a fragment or credentials (https://app.example.com/signed-in, or an app's scheme)` });
      }
    }
  })
  .transform((env) => {
    const raw = env as Record<string, unknown>;
    const text = (key: string) => (typeof raw[key] === 'string' && (raw[key]).trim() !== '' ? (raw[key]).trim() : undefined);
    const providers: OidcProviderConfig[] = oidcNames(env.OIDC_PROVIDERS).map((name) => ({
      name,
      issuer: text(oidcVariable(name, 'ISSUER'))!,
      clientId: text(oidcVariable(name, 'CLIENT_ID'))!,
      clientSecret: text(oidcVariable(name, 'CLIENT_SECRET')),
      appleKey:
        name === 'apple' && text(oidcVariable(name, 'CLIENT_SECRET')) === undefined
          ? { teamId: env.OIDC_APPLE_TEAM_ID!, keyId: env.OIDC_APPLE_KEY_ID!, privateKey: env.OIDC_APPLE_PRIVATE_KEY!.replaceAll('\\n', '\n') }
          : undefined,
      scopes: [...new Set(['openid', ...(text(oidcVariable(name, 'SCOPES')) ?? 'email profile').split(' ')])],
      nonce: text(oidcVariable(name, 'NONCE')) === 'sha256' ? 'sha256' : 'raw',
      label: text(oidcVariable(name, 'LABEL')) ?? `${name[0]!.toUpperCase()}${name.slice(1)}`,
      // Apple answers a web flow that asks for the name or email scope only with form_post.
      responseMode: (text(oidcVariable(name, 'RESPONSE_MODE')) ?? (name === 'apple' ? 'form_post' : 'query')) as 'query' | 'form_post',
    }));
    return {
      /** Sign-in with OpenID Connect providers (/api/v1/auth/oidc/*); no providers: the endpoints answer 1004. */
      oidc: { providers, redirectUris: [...new Set((env.OIDC_REDIRECT_URIS ?? '').split(',').map((v) => v.trim()).filter(Boolean))] },
    };
  });

/** The slice: the account API's variables, passkeys' and the OpenID Connect providers', each part checked as a whole. */
export const accountsConfig = accountApiConfig.and(webauthnConfig).and(oidcConfig);
