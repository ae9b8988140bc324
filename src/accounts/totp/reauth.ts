// TOTP and recovery codes as a factor of POST /reauth: the body's totp_code or recovery_code, checked
// in the account's failure budget like the login's second step.
import type { ReauthFactor } from '../shared/second-factors.js';
import { recoveryCode, totpCode } from './contract.js';
import type { TotpService } from './service.js';

export function totpReauth(totp: TotpService): ReauthFactor {
  return {
    fields: { totp_code: totpCode.optional(), recovery_code: recoveryCode.optional() },
    names: ['TOTP code', 'recovery code'],
    freshFor: 'turn TOTP on',
    errors: [
      ['totp_not_set_up', 'a TOTP or recovery code for an account without TOTP'],
      ['wrong_mfa_code', 'the TOTP code is wrong or was already used, or the recovery code is wrong or used'],
    ],
    check(user, body, client, failed) {
      // The body's rule made them strings.
      const { totp_code: code, recovery_code: recoveryCode } = body as { totp_code?: string; recovery_code?: string };
      const proof = recoveryCode !== undefined ? { recoveryCode } : code !== undefined ? { code } : undefined;
      return proof && totp.reauthenticate(user, proof, client, failed);
    },
  };
}
