// The mailer's two queues (issue 32 #4): codes and notices each have their places and their sender.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { createMailer } from '../../src/mail/mailer.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startTestSmtp();
});
afterAll(() => smtp.close());

const message = (to: string, subject: string) => ({ to, subject, text: subject });

describe('mailer queues', () => {
  it('holds a place per reservation, refuses one beyond the limit, and gives it back on release', () => {
    const mailer = createMailer(loadConfig({ SMTP_URL: smtp.url }), createLogger({ level: 'silent' }), { code: 2, notice: 1 })!;
    const a = mailer.reserve('code')!;
    const b = mailer.reserve('code')!;
    expect(mailer.reserve('code')).toBeUndefined();
    expect(mailer.pending()).toEqual({ code: 2, notice: 0 });
    a.release();
    a.release();
    expect(mailer.pending().code).toBe(1);
    const c = mailer.reserve('code');
    expect(c).toBeDefined();
    b.release();
    c!.release();
    // Notices beyond their queue are dropped and counted; the code queue is not touched by them.
    expect(mailer.send(message('x@example.com', 'n1'), 'notice')).toBe(true);
    expect(mailer.send(message('x@example.com', 'n2'), 'notice')).toBe(false);
    expect(mailer.dropped()).toEqual({ code: 0, notice: 1 });
    expect(mailer.reserve('code')).toBeDefined();
  });

  it('sends codes on their own while notices wait for a slow server', async () => {
    const mailer = createMailer(loadConfig({ SMTP_URL: smtp.url }), createLogger({ level: 'silent' }))!;
    smtp.setDelay(500);
    try {
      const to = `lanes_${Date.now()}@example.com`;
      for (let i = 0; i < 10; i++) mailer.send(message(to, `notice ${i}`), 'notice');
      mailer.send(message(to, 'the code'), 'code');
      await smtp.waitFor((m) => m.to.includes(to) && m.subject === 'the code', 2500);
      expect(smtp.received.filter((m) => m.to.includes(to) && m.subject.startsWith('notice')).length).toBeLessThan(5);
    } finally {
      smtp.setDelay(0);
    }
  });
});
