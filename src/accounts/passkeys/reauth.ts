// Passkeys as a factor of POST /reauth: the body's passkey, an assertion for the options of
// POST /reauth/passkey/options, accepted only from the session's own user.
import type { ReauthFactor } from '../shared/second-factors.js';
import { authenticationResponse, type AuthenticationResponseBody } from './contract.js';
import type { PasskeyService } from './service.js';

export function passkeyReauth(passkeys: PasskeyService): ReauthFactor {
  return {
    fields: { passkey: authenticationResponse.optional().describe("the browser's assertion for the options of POST /reauth/passkey/options") },
    names: ['passkey'],
    freshFor: 'add a passkey',
    errors: ['passkey_reauth_refused', ['passkeys_disabled', 'a passkey, and passkeys are not configured']],
    check: (user, body, _client, failed) => (body.passkey === undefined ? undefined : passkeys.reauthenticate(user, body.passkey as AuthenticationResponseBody, failed)),
  };
}
