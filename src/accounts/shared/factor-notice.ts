// The owner's notices of second-factor events (a factor turned on or off, a recovery code used, a
// wrong code, an operator's clearing): one limiter for all of them, each feature giving the texts of
// its kinds.
import type { MailMessage } from '../../mail/mailer.js';
import type { Folded, NoticeInput } from '../../mail/notice-throttle.js';

/** What a notice of a factor event says: its subject, the sentence saying what happened, the advice. */
export interface FactorNoticeText {
  subject: string;
  happened: string;
  advice: string;
}

/** The notice of a factor event in `text`, or the summary of those folded into one window. */
export function factorNotice(input: NoticeInput, folded: Folded | undefined, text: FactorNoticeText): MailMessage {
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
