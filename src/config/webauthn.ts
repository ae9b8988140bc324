// Passkeys (WebAuthn): the relying party the service is to browsers and authenticators,
// and the page origins whose ceremonies it accepts (src/accounts/passkeys/).
import { z } from 'zod';
import { optionalString, originList } from './env.js';
import { serverVariables } from './server.js';

/** A DNS name as WebAuthn takes an RP ID: lower-case labels, no scheme, port, path or trailing dot; not an IP address. */
const RP_ID = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const isRpId = (value: string) => RP_ID.test(value) && !IPV4.test(value);

/** Hosts a browser treats as a secure context over plain http (so WebAuthn works there). */
function isLocalhost(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

export const webauthnVariables = {
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

/** Its part of .env.example: the area's title and the defaults that depend on the environment. */
export const webauthnEnvDocs = {
  title: 'Passkeys (WebAuthn): the relying party and the origins of the pages that sign in',
  notes: {
    WEBAUTHN_RP_ID: 'localhost outside production; in production passkeys are off until it is set',
    WEBAUTHN_ORIGINS: 'http://localhost:<PORT> outside production; required with WEBAUTHN_RP_ID in production',
  },
};

export const webauthnConfig = z
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
