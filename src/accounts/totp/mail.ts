// The owner's notices of TOTP events (turned on or off, a recovery code used, a wrong code after the
// right password), folded per window like every notice.
import type { FactorNoticeText } from '../shared/factor-notice.js';

/** The kinds of notice TOTP mails the owner (each limited per account and recipient). */
export type FactorNoticeKind = 'totp_enabled' | 'totp_disabled' | 'recovery_code_used' | 'mfa_failed';

/** What the notice of each kind says (the module's one factor-notice limiter composes them). */
export const TOTP_NOTICE_TEXT: Record<FactorNoticeKind, FactorNoticeText> = {
  totp_enabled: {
    subject: 'Two-factor sign-in was turned on',
    happened: 'Two-factor sign-in (an authenticator app) was turned on for your chat account',
    advice: 'If this was not you, reset your password now with "forgot password" and check your signed-in devices.',
  },
  totp_disabled: {
    subject: 'Two-factor sign-in was turned off',
    happened: 'Two-factor sign-in was turned off for your chat account',
    advice: 'If this was not you, reset your password now with "forgot password", check your signed-in devices and turn two-factor sign-in on again.',
  },
  recovery_code_used: {
    subject: 'A recovery code was used',
    happened: 'One of the recovery codes of your chat account was used',
    advice: 'Each code works once. If this was not you, reset your password now and turn two-factor sign-in off and on again for new codes.',
  },
  mfa_failed: {
    subject: 'A wrong two-factor code was entered',
    happened: 'Someone entered the right password of your chat account but a wrong two-factor code',
    advice: 'If this was not you, your password is known to someone else: change it now.',
  },
};
