// The owner's notices of an identity linked to or unlinked from the account, folded per window like every notice.
import type { FactorNoticeText } from '../shared/factor-notice.js';

export const OIDC_NOTICE_TEXT: Record<'identity_linked' | 'identity_unlinked', FactorNoticeText> = {
  identity_linked: {
    subject: 'A sign-in provider was linked to your account',
    happened: 'An account at a sign-in provider (Google, Apple or another) was linked to your chat account',
    advice: 'It can now sign in to your account. If this was not you, remove it from your linked identities, change your password and end the devices you do not know.',
  },
  identity_unlinked: {
    subject: 'A sign-in provider was removed from your account',
    happened: 'An account at a sign-in provider was unlinked from your chat account',
    advice: 'It can no longer sign in to your account. If this was not you, change your password and end the devices you do not know.',
  },
};
