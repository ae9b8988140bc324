// The notice throttle (issue 32 #4): one notice per kind, account and recipient per window; what
// comes later in the window is summed up in one message at its end. Through a real SMTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { createMailer, type Mailer } from '../../src/mail/mailer.js';
import { NoticeThrottle, type Folded, type NoticeInput } from '../../src/mail/notice-throttle.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let smtp: TestSmtp;
let mailer: Mailer;
beforeAll(async () => {
  smtp = await startTestSmtp();
  mailer = createMailer(loadConfig({ SMTP_URL: smtp.url, MAIL_FROM: 'Chat <no-reply@chat.test>' }), createLogger({ level: 'silent' }))!;
});
afterAll(() => smtp.close());

const compose = (input: NoticeInput, folded?: Folded) => ({
  to: input.to,
  subject: `notice ${input.kind}`,
  text: folded ? `folded ${folded.count} from ${folded.first.toISOString()} to ${folded.last.toISOString()}` : `single ${input.at.toISOString()}`,
});

let n = 0;
const address = () => `notice_${Date.now()}_${n++}@example.com`;

describe('NoticeThrottle', () => {
  it('sends the first notice, folds the rest of the window into one summary at its end, then starts a new window', async () => {
    const to = address();
    // The summary opens a window of its own: a notice right after it (as the summary is handed to the
    // mailer, not once the SMTP server has it, which under load came after that window's 600 ms) is folded too.
    let afterSummary: string | undefined;
    const sending: Mailer = Object.create(mailer, {
      send: {
        value: (...args: Parameters<Mailer['send']>) => {
          const queued = mailer.send(...args);
          if (args[0].text.startsWith('folded')) afterSummary = throttle.notify({ kind: 'password_changed', account: '1', to, at: new Date() });
          return queued;
        },
      },
    });
    const throttle = new NoticeThrottle({ mailer: sending, logger: createLogger({ level: 'silent' }), compose, windowMs: 600 });
    const times = Array.from({ length: 5 }, (_, i) => new Date(Date.UTC(2030, 0, 1, 0, 0, i)));
    expect(times.map((at) => throttle.notify({ kind: 'password_changed', account: '1', to, at }))).toEqual(['sent', 'folded', 'folded', 'folded', 'folded']);
    await smtp.waitFor((m) => m.to.includes(to));
    const summary = await smtp.waitFor((m) => m.to.includes(to) && m.text.startsWith('folded'), 5000);
    expect(summary.text).toContain(`folded 4 from ${times[1]!.toISOString()} to ${times[4]!.toISOString()}`);
    expect(afterSummary).toBe('folded');
    expect(smtp.received.filter((m) => m.to.includes(to))).toHaveLength(2);
    expect(throttle.counts).toEqual({ sent: 1, folded: 5, dropped: 0 });
    throttle.close();
  });

  it('keeps one window per account and one per recipient, and kinds apart', () => {
    const throttle = new NoticeThrottle({ mailer, logger: createLogger({ level: 'silent' }), compose, windowMs: 60_000 });
    const to = address();
    const at = new Date();
    expect(throttle.notify({ kind: 'password_changed', account: '7', to, at })).toBe('sent');
    // Another account mailing the same recipient, the same account mailing another recipient: folded.
    expect(throttle.notify({ kind: 'password_changed', account: '8', to: to.toUpperCase(), at })).toBe('folded');
    expect(throttle.notify({ kind: 'password_changed', account: '7', to: address(), at })).toBe('folded');
    // Another kind has windows of its own.
    expect(throttle.notify({ kind: 'email_changed', account: '7', to, at })).toBe('sent');
    throttle.close();
  });

  it('drops (and counts) notices beyond the windows it can hold, instead of growing', () => {
    const throttle = new NoticeThrottle({ mailer, logger: createLogger({ level: 'silent' }), compose, windowMs: 60_000, maxWindows: 4 });
    const results = Array.from({ length: 4 }, (_, i) => throttle.notify({ kind: 'password_changed', account: `a${i}`, to: address(), at: new Date() }));
    expect(results).toEqual(['sent', 'sent', 'dropped', 'dropped']);
    expect(throttle.counts.dropped).toBe(2);
    throttle.close();
  });
});
