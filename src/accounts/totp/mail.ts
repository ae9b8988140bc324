// The owner's notices of TOTP events (turned on or off, a recovery code used, a wrong code after the
// right password), folded per window like every notice.
import type { MailMessage } from '../../mail/mailer.js';
import type { Folded, NoticeInput } from '../../mail/notice-throttle.js';

/** The kinds of notice TOTP mails the owner (each limited per account and recipient). */
export type FactorNoticeKind = 'totp_enabled' | 'totp_disabled' | 'recovery_code_used' | 'mfa_failed';

/** What a notice of a factor event says: its subject, the sentence saying what happened, the advice. */
export interface FactorNoticeText {
  subject: string;
  happened: string;
  advice: string;
}

const NOTICE_TEXT: Record<FactorNoticeKind, FactorNoticeText> = {
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

/** The notice of a factor event, or the summary of those folded into one window (`text`: another feature's event in the same window). */
export function factorNotice(input: NoticeInput, folded?: Folded, text: FactorNoticeText = NOTICE_TEXT[input.kind as FactorNoticeKind]): MailMessage {
  const time = (d: Date) => `${d.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  const first = folded
    ? folded.count === 1
      ? `${text.happened} again on ${time(folded.last)}.`
      : `${text.happened} ${folded.count} more times between ${time(folded.first)} and ${time(folded.last)}.`
    : `${text.happened} on ${time(input.at)}.`;
  const lines = [first, ''];
  if (folded) lines.push('(Notices of this kind are sent at most once every 10 minutes; this one sums up those since the last.)', '');
  lines.push(text.advice);
  return { to: input.to, subject: text.subject, text: lines.join('\n') };
}
