// Re-authentication: a signed-in session proves one factor again (its password, or one of the second
// factors the feature list provides), which makes it fresh for REAUTH_WINDOW_S: adding a factor and
// changing the e-mail address need a fresh session. Inputs, outputs, the route.
import { z } from 'zod';
import { accountRoute, BEARER, okResponse, timeString } from '../shared/contract.js';
import { currentPassword } from '../shared/fields.js';
import type { ReauthFactor } from '../shared/second-factors.js';

/** "a, b and c" (or "a, b or c"). */
function listed(items: readonly string[], conjunction: 'and' | 'or'): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} ${conjunction} ${items.at(-1)}`;
}

/** The body and its rule: the password or one factor's fields, exactly one of them. */
function reauthBody(factors: readonly ReauthFactor[]) {
  const fields: z.ZodRawShape = { password: currentPassword.optional() };
  for (const factor of factors) Object.assign(fields, factor.fields);
  const names = Object.keys(fields);
  const oneFactor = `exactly one of ${listed(names, 'and')}`;
  const body = z.object(fields).superRefine((given, ctx) => {
    if (names.filter((name) => given[name] !== undefined).length !== 1) ctx.addIssue({ code: 'custom', path: ['password'], message: oneFactor });
  });
  return { body, oneFactor };
}

/** POST /reauth for the factors the feature list provides (in its order). */
export function reauthRoute(factors: readonly ReauthFactor[]) {
  const { body, oneFactor } = reauthBody(factors);
  // The factors' own phrases, the one listed last first.
  const freshFor = [...factors.map((factor) => factor.freshFor).reverse(), 'change the e-mail address'];
  const reauthenticated = z.strictObject({
    reauthenticated_at: timeString,
    fresh_until: timeString.describe(`until when the session may ${listed(freshFor, 'or')}`),
  });
  return accountRoute(
    {
      tags: ['session'],
      method: 'post',
      path: '/reauth',
      summary: `Prove one factor again (${listed(['password', ...factors.flatMap((factor) => factor.names)], 'or')}): the session is fresh for REAUTH_WINDOW_S`,
      security: BEARER,
      request: { body: { required: true, content: { 'application/json': { schema: body } } } },
      responses: { 200: okResponse('the session is fresh', reauthenticated) },
    },
    [
      ['invalid_request', `a field fails its rule, or not ${oneFactor}`],
      'invalid_access_token',
      ['wrong_old_password', 'password is wrong'],
      ...factors.flatMap((factor) => factor.errors),
      'server_busy',
    ],
  );
}
