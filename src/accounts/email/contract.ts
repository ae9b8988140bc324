// The account's e-mail address: prove it with a mailed code, and move the account to
// another address (proved the same way before it takes effect).
import { z } from 'zod';
import { accountRoute, BEARER, okResponse } from '../shared/contract.js';
import { currentPassword, email, rule } from '../shared/fields.js';

const CODE_RULE = '6 digits';
/** A mailed 6-digit code, as a string. */
const emailCode = z.string(rule(CODE_RULE)).regex(/^[0-9]{6}$/, CODE_RULE);

export const verifyEmailBody = z.object({ code: emailCode });
export const changeEmailBody = z.object({ new_email: email, password: currentPassword });
export const confirmEmailBody = z.object({ code: emailCode });

export type ChangeEmailBody = z.infer<typeof changeEmailBody>;

/** The account's address once proved. */
export const verifiedEmail = z.strictObject({
  email: z.string().describe("the account's address (lower-cased)"),
  email_verified: z.literal(true),
});
export type VerifiedEmailView = z.output<typeof verifiedEmail>;

const NO_MAIL = ['mail_disabled', 'e-mail codes are not available (production without SMTP_URL)'] as const;
const BUSY = ['mail_busy', 'the queue of codes to mail is full; Retry-After is set, no code was issued'] as const;

export const verifyEmail = accountRoute(
  {
    tags: ['e-mail'],
    method: 'post',
    path: '/email/verify',
    summary: "Prove the account's address with the 6-digit code mailed to it",
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: verifyEmailBody } } } },
    responses: { 200: okResponse('the address is verified', verifiedEmail) },
  },
  ['invalid_request', 'invalid_access_token', 'invalid_email_code', 'email_already_verified', NO_MAIL],
);

export const resendEmailVerification = accountRoute(
  {
    tags: ['e-mail'],
    method: 'post',
    path: '/email/verify/resend',
    summary: "Mail a new verification code to the account's address (it replaces the earlier one)",
    security: BEARER,
    responses: { 200: okResponse('a code is on its way', z.null()) },
  },
  ['invalid_access_token', 'email_already_verified', ['rate_limited', 'too many requests, or more than 5 codes for this account in the hour; Retry-After is set'], BUSY, NO_MAIL],
);

export const changeEmail = accountRoute(
  {
    tags: ['e-mail'],
    method: 'put',
    path: '/email',
    summary: 'Ask to move the account to another address: a code is mailed to it (the address changes on POST /email/confirm). Needs a fresh session (POST /reauth)',
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: changeEmailBody } } } },
    responses: { 200: okResponse('a code is on its way to new_email', z.null()) },
  },
  [
    'invalid_request',
    'invalid_access_token',
    ['wrong_old_password', 'password is wrong (counted in the per-account failure budget)'],
    'reauthentication_required',
    'same_email',
    'too_many_failures',
    ['rate_limited', 'too many requests, or more than 5 codes for this account in the hour; Retry-After is set'],
    'server_busy',
    BUSY,
    NO_MAIL,
  ],
);

export const confirmEmail = accountRoute(
  {
    tags: ['e-mail'],
    method: 'post',
    path: '/email/confirm',
    summary: 'Move the account to the address the code was mailed to; every other session ends, the old address is told',
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: confirmEmailBody } } } },
    responses: { 200: okResponse('the new address, verified', verifiedEmail) },
  },
  ['invalid_request', 'invalid_access_token', 'invalid_email_code', ['email_taken', 'new_email belongs to another account (PUT /email answers alike for any address: this is where a taken one is refused)'], NO_MAIL],
);
