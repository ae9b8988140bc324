// Two-factor sign-in: a TOTP factor with recovery codes (set up, enable, disable) and the
// login's second step (POST /login/mfa, after a login answered 2007). Inputs, outputs and the routes.
import { z } from 'zod';
import { accountRoute, BEARER, okResponse } from '../shared/contract.js';
import { currentPassword, rule } from '../shared/fields.js';
import { session } from '../sessions/contract.js';

/** Recovery codes an enable gives (each single use). */
export const RECOVERY_CODE_COUNT = 10;

const TOTP_CODE_RULE = '6 digits';
const RECOVERY_CODE_RULE = 'a recovery code: 10 letters and digits, a dash in the middle optional';
const CODE_RULE = `${TOTP_CODE_RULE} (a TOTP code) or ${RECOVERY_CODE_RULE}`;

export const totpCode = z.string(rule(TOTP_CODE_RULE)).regex(/^[0-9]{6}$/, TOTP_CODE_RULE);
/** As typed: case and a dash (or spaces) around it do not matter. */
export const recoveryCode = z.string(rule(RECOVERY_CODE_RULE)).regex(/^ *[A-Za-z0-9]{5}[- ]?[A-Za-z0-9]{5} *$/, RECOVERY_CODE_RULE);
/** `<id>.<secret>` as a 2007 answer gave it. */
const mfaToken = z.string(rule('the mfa_token of a 2007 answer')).regex(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/, 'the mfa_token of a 2007 answer');

export const enableTotpBody = z.object({ code: totpCode });

/** To disable: the password and a TOTP code, or one of the recovery codes (which is then used up). */
export const disableTotpBody = z.object({ password: currentPassword, code: z.union([totpCode, recoveryCode], rule(CODE_RULE)) });

export const loginMfaBody = z
  .object({ mfa_token: mfaToken, code: totpCode.optional(), recovery_code: recoveryCode.optional() })
  .superRefine((body, ctx) => {
    if ((body.code === undefined) === (body.recovery_code === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['code'], message: 'exactly one of code and recovery_code' });
    }
  });

export type LoginMfaBody = z.infer<typeof loginMfaBody>;

export const totpSetup = z.strictObject({
  secret: z.string().describe('the TOTP secret, base32 (for typing into an authenticator app)'),
  otpauth_url: z.string().describe('otpauth://totp/… URI (SHA1, 6 digits, 30 s) for a QR code'),
});

export const recoveryCodes = z.strictObject({
  recovery_codes: z.array(z.string()).length(RECOVERY_CODE_COUNT).describe('single-use recovery codes, shown only this once'),
});

export type TotpSetupView = z.output<typeof totpSetup>;
export type RecoveryCodesView = z.output<typeof recoveryCodes>;

export const setupTotp = accountRoute(
  {
    tags: ['two-factor'],
    method: 'post',
    path: '/mfa/totp/setup',
    summary: 'Start TOTP: a new secret, pending until a code from it enables it (replaces an earlier pending one). Needs a verified e-mail address and a fresh session (POST /reauth)',
    security: BEARER,
    responses: { 200: okResponse('the secret and its otpauth URL', totpSetup) },
  },
  ['invalid_access_token', 'email_not_verified', 'reauthentication_required', 'totp_already_enabled'],
);

export const enableTotp = accountRoute(
  {
    tags: ['two-factor'],
    method: 'post',
    path: '/mfa/totp/enable',
    summary: 'Enable TOTP with a code from the pending secret; answers the recovery codes, once',
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: enableTotpBody } } } },
    responses: { 200: okResponse('enabled; store the recovery codes now, they are not shown again', recoveryCodes) },
  },
  [
    'invalid_request',
    'invalid_access_token',
    'email_not_verified',
    'reauthentication_required',
    ['totp_not_set_up', 'no pending TOTP secret (POST /mfa/totp/setup first)'],
    'totp_already_enabled',
    'wrong_mfa_code',
  ],
);

export const disableTotp = accountRoute(
  {
    tags: ['two-factor'],
    method: 'delete',
    path: '/mfa/totp',
    summary: 'Disable TOTP with the password and a TOTP code or a recovery code; the recovery codes go with it',
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: disableTotpBody } } } },
    responses: { 200: okResponse('disabled', z.null()) },
  },
  [
    'invalid_request',
    'invalid_access_token',
    ['totp_not_set_up', 'TOTP is not enabled'],
    ['wrong_old_password', 'password is wrong'],
    'wrong_mfa_code',
    'server_busy',
  ],
);

export const loginMfa = accountRoute(
  {
    tags: ['session'],
    method: 'post',
    path: '/login/mfa',
    summary: "The login's second step: the mfa_token of a 2007 answer and a TOTP code or a recovery code",
    request: { body: { required: true, content: { 'application/json': { schema: loginMfaBody } } } },
    responses: { 200: okResponse('tokens and the user, as a login answers them', session) },
  },
  [
    ['invalid_request', 'a field fails its rule, or not exactly one of code and recovery_code'],
    'invalid_mfa_token',
    'invalid_mfa_code',
    'account_banned',
  ],
);
