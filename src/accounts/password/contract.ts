// The password: change it (authenticated), or reset it with a mailed code.
import { z } from 'zod';
import { accountRoute, BEARER, okResponse } from '../shared/contract.js';
import { email, nonEmpty, password, rule, RULES } from '../shared/fields.js';

export const changePasswordBody = z.object({
  old_password: nonEmpty(RULES.required),
  new_password: password,
});

export const forgotPasswordBody = z.object({ email });

export const resetPasswordBody = z.object({
  email,
  code: z.string(rule('6 digits')).regex(/^[0-9]{6}$/, '6 digits'),
  new_password: password,
});

export type ChangePasswordBody = z.infer<typeof changePasswordBody>;

export const changePassword = accountRoute(
  {
    tags: ['password'],
    method: 'put',
    path: '/password',
    summary: "Change the caller's password; other sessions are revoked",
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: changePasswordBody } } } },
    responses: { 200: okResponse('password changed', z.null()) },
  },
  ['invalid_request', 'invalid_access_token', 'wrong_old_password', 'server_busy'],
);

export const forgotPassword = accountRoute(
  {
    tags: ['password'],
    method: 'post',
    path: '/password/forgot',
    summary: 'Mail a 6-digit reset code to a registered e-mail (the same answer, in the same time, for any e-mail)',
    request: { body: { required: true, content: { 'application/json': { schema: forgotPasswordBody } } } },
    responses: { 200: okResponse('accepted (whether or not the e-mail is registered)', z.null()) },
  },
  ['invalid_request', 'mail_disabled', 'mail_busy'],
);

export const resetPassword = accountRoute(
  {
    tags: ['password'],
    method: 'post',
    path: '/password/reset',
    summary: 'Set a new password with a mailed code; every session ends',
    request: { body: { required: true, content: { 'application/json': { schema: resetPasswordBody } } } },
    responses: { 200: okResponse('password set', z.null()) },
  },
  [['invalid_request', 'a field fails its rule, or new_password is too common or equals the username or e-mail'], 'invalid_reset_code', 'account_banned', 'mail_disabled'],
);
