// TURN: the relay's coturn and the short-lived credentials the service hands out for it
// (the "TURN REST API" scheme, coturn's use-auth-secret; src/turn/).
import { z } from 'zod';
import { int, optionalString } from './env.js';

/** `turn:host[:port][?transport=udp|tcp]` or `turns:host[:port][?transport=tcp]` (RFC 7065), host a name, an IPv4 or a [IPv6]. */
const TURN_URL =
  /^(turns?):(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)(:(\d{1,5}))?(\?transport=(udp|tcp))?$/;

/** Why `url` is not a TURN URL, or undefined when it is one. */
export function turnUrlProblem(url: string): string | undefined {
  const match = TURN_URL.exec(url);
  if (!match) return 'must be turn:host[:port][?transport=udp|tcp] or turns:host[:port][?transport=tcp]';
  const port = match[7] === undefined ? undefined : Number(match[7]);
  if (port !== undefined && (port < 1 || port > 65535)) return 'its port must be 1-65535';
  if (match[1] === 'turns' && match[9] === 'udp') return 'turns: runs over TLS, so its transport is tcp';
  return undefined;
}

/** Comma-separated TURN URLs, at most 16, each at most 256 characters. */
const turnUrls = z
  .string()
  .max(4096)
  .transform((value, ctx): readonly string[] => {
    const urls = value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    if (urls.length > 16) ctx.addIssue({ code: 'custom', message: 'at most 16 URLs' });
    for (const url of urls) {
      const problem = url.length > 256 ? 'is longer than 256 characters' : turnUrlProblem(url);
      // Only the start of a bad entry: the message must stay one line, whatever was pasted.
      if (problem) ctx.addIssue({ code: 'custom', message: `"${url.slice(0, 64)}" ${problem}` });
    }
    return urls;
  });

export const turnVariables = {
  TURN_URLS: optionalString.pipe(turnUrls.optional()),
  // coturn's static-auth-secret; never logged, never in an answer.
  TURN_SECRET: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').max(1024).optional()),
  // A credential is needed only to make allocations: coturn keeps an allocation alive by refresh after
  // the credential expired, so a call outlasts it, and a client asks GET /ice-servers again for a new
  // transport or an ICE restart. Five minutes covers gathering with room to spare, and a leaked
  // credential is good for at most that long (within its owner's allocation quota).
  TURN_CREDENTIAL_TTL_S: int(300, 60, 172_800),
  RATE_LIMIT_ICE_SERVERS_PER_MIN: int(60, 0, 1_000_000),
};

export const turnConfig = z
  .object(turnVariables)
  .superRefine((env, ctx) => {
    const urls = env.TURN_URLS ?? [];
    if (urls.length > 0 && env.TURN_SECRET === undefined) {
      ctx.addIssue({ code: 'custom', path: ['TURN_SECRET'], message: 'must be set when TURN_URLS is set (coturn static-auth-secret)' });
    }
    if (urls.length === 0 && env.TURN_SECRET !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['TURN_URLS'], message: 'must be set when TURN_SECRET is set' });
    }
  })
  .transform((env) => ({
    /** Undefined unless TURN_URLS and TURN_SECRET are both set. */
    turn:
      env.TURN_URLS && env.TURN_URLS.length > 0 && env.TURN_SECRET
        ? { urls: env.TURN_URLS, secret: env.TURN_SECRET, credentialTtlS: env.TURN_CREDENTIAL_TTL_S }
        : undefined,
    /** GET /api/v1/auth/ice-servers per account and minute (counted once the access token is checked); 0 disables. */
    iceServersPerMin: env.RATE_LIMIT_ICE_SERVERS_PER_MIN,
  }));
