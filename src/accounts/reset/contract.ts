// The forgotten password: a 6-digit code mailed to a registered address, then a new password with it.
import { z } from 'zod';
import { accountRoute, okResponse } from '../shared/contract.js';
import { email, password, rule } from '../shared/fields.js';

export const forgotPasswordBody = z.object({ email });

export const resetPasswordBody = z.object({
  email,
  code: z.string(rule('6 digits')).regex(/^[0-9]{6}$/, '6 digits'),
  new_password: password,
});

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
