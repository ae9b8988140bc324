// Re-authentication: a signed-in session proves one factor again (password, TOTP or recovery code,
// or one of its user's passkeys), which makes it fresh for REAUTH_WINDOW_S: adding a passkey,
// turning TOTP on and changing the e-mail address need a fresh session. Inputs, outputs, routes.
import { z } from 'zod';
import { accountRoute, BEARER, okResponse, timeString } from '../shared/contract.js';
import { currentPassword } from '../shared/fields.js';
import { authenticationResponse } from '../passkeys/contract.js';
import { recoveryCode, totpCode } from '../totp/contract.js';

const ONE_FACTOR = 'exactly one of password, totp_code, recovery_code and passkey';

export const reauthBody = z
  .object({
    password: currentPassword.optional(),
    totp_code: totpCode.optional(),
    recovery_code: recoveryCode.optional(),
    passkey: authenticationResponse.optional().describe("the browser's assertion for the options of POST /reauth/passkey/options"),
  })
  .superRefine((body, ctx) => {
    const given = [body.password, body.totp_code, body.recovery_code, body.passkey].filter((factor) => factor !== undefined).length;
    if (given !== 1) ctx.addIssue({ code: 'custom', path: ['password'], message: ONE_FACTOR });
  });

export type ReauthBody = z.output<typeof reauthBody>;

export const reauthenticated = z.strictObject({
  reauthenticated_at: timeString,
  fresh_until: timeString.describe('until when the session may add a passkey, turn TOTP on or change the e-mail address'),
});

export type ReauthenticatedView = z.output<typeof reauthenticated>;

export const reauth = accountRoute(
  {
    tags: ['session'],
    method: 'post',
    path: '/reauth',
    summary: 'Prove one factor again (password, TOTP code, recovery code or passkey): the session is fresh for REAUTH_WINDOW_S',
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: reauthBody } } } },
    responses: { 200: okResponse('the session is fresh', reauthenticated) },
  },
  [
    ['invalid_request', `a field fails its rule, or not ${ONE_FACTOR}`],
    'invalid_access_token',
    ['wrong_old_password', 'password is wrong'],
    ['totp_not_set_up', 'a TOTP or recovery code for an account without TOTP'],
    ['wrong_mfa_code', 'the TOTP code is wrong or was already used, or the recovery code is wrong or used'],
    'passkey_reauth_refused',
    ['passkeys_disabled', 'a passkey, and passkeys are not configured'],
    'server_busy',
  ],
);
