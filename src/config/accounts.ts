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
  sections: { WEBAUTHN_RP_ID: 'Passkeys (WebAuthn): the relying party and the origins of the pages that sign in' },
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

/** The slice: the account API's variables and passkeys', each part checked as a whole. */
export const accountsConfig = accountApiConfig.and(webauthnConfig);
