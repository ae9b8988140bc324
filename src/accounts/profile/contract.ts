// The caller's profile: read it, change some of its fields.
import { z } from 'zod';
import { accountRoute, BEARER, okResponse, timeString } from '../shared/contract.js';
import { avatar, gender, nickname, phone } from '../shared/fields.js';
import { sessionUser } from '../sessions/contract.js';
import { OWNER_VIEW_FIELDS } from '../vocabulary.js';

/** Strict: a client sending username, email or roles must learn that they did not change. */
export const updateProfileBody = z.strictObject({
  nickname: nickname.optional(),
  avatar: avatar.optional(),
  gender: gender.optional(),
  phone: phone.optional(),
});

export type UpdateProfileBody = z.infer<typeof updateProfileBody>;

export const profile = sessionUser.extend({
  gender: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  phone: z.string(),
  created_at: timeString,
  ...OWNER_VIEW_FIELDS,
});

export type ProfileView = z.output<typeof profile>;

export const getProfile = accountRoute(
  {
    tags: ['profile'],
    method: 'get',
    path: '/profile',
    summary: "Read the caller's profile",
    security: BEARER,
    responses: { 200: okResponse('the profile', profile) },
  },
  ['invalid_access_token'],
);

export const updateProfile = accountRoute(
  {
    tags: ['profile'],
    method: 'put',
    path: '/profile',
    summary: "Update the caller's profile (only the fields sent)",
    security: BEARER,
    request: { body: { required: true, content: { 'application/json': { schema: updateProfileBody } } } },
    responses: { 200: okResponse('the whole updated profile', profile) },
  },
  ['invalid_request', 'invalid_access_token'],
);
