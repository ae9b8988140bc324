// The account itself: delete it.
import { z } from 'zod';
import { accountRoute, BEARER, okResponse } from '../shared/contract.js';
import { currentPassword } from '../shared/fields.js';

export const deleteAccountBody = z.object({ password: currentPassword });

export const deleteAccount = accountRoute(
  {
    tags: ['account'],
    method: 'delete',
    path: '/account',
    summary: "Delete the caller's account: every session ends, username and e-mail become free, personal data is removed",
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: deleteAccountBody } } } },
    responses: { 200: okResponse('account deleted', z.null()) },
  },
  ['invalid_request', 'invalid_access_token', ['wrong_old_password', 'password is wrong'], 'server_busy'],
);
