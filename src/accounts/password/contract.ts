// The password: its owner changes it (authenticated).
import { z } from 'zod';
import { accountRoute, BEARER, okResponse } from '../shared/contract.js';
import { nonEmpty, password, RULES } from '../shared/fields.js';

export const changePasswordBody = z.object({
  old_password: nonEmpty(RULES.required),
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
