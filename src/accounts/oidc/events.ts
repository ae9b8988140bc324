// Identities at OpenID Connect providers on the bus: one linked to an account, one unlinked.
import { z } from 'zod';
import { event, userId } from '../shared/event-kit.js';

const provider = z.string().describe('the provider, as named in OIDC_PROVIDERS');
const identityId = z.string().describe('the identity id (GET /api/v1/auth/identities)');

export const oidcEvents = {
  'auth.identity.linked': event('auth.identity.linked', { userId, provider, identityId }, 'An identity at an OpenID Connect provider was linked to an account (by the owner, or by a sign-in that created the account).'),
  'auth.identity.unlinked': event('auth.identity.unlinked', { userId, provider, identityId }, 'The owner removed an identity at an OpenID Connect provider from the account.'),
} as const;
