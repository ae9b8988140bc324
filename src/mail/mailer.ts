// Outgoing mail: nodemailer over SMTP (SMTP_URL), or the log outside production when no SMTP server
// is configured. Sending is queued, never awaited by a request: an answer's timing must not depend
// on the SMTP server (a forgot-password answer would otherwise tell whether the e-mail exists).
import { createTransport } from 'nodemailer';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** `smtp` delivers; `log` writes each message to the log at warn (development only). */
  readonly kind: 'smtp' | 'log';
  /** Queues the message; failures are logged, never thrown. False when the queue is full and it was dropped. */
  send(message: MailMessage): boolean;
}

/** Messages waiting at once; beyond it new ones are dropped (and logged), so a flood cannot grow memory. */
export const MAIL_QUEUE_LIMIT = 200;

/**
 * The mailer for this configuration, or undefined when mail is off (production without SMTP_URL).
 * @example const mailer = createMailer(config, logger); mailer?.send({ to, subject, text })
 */
export function createMailer(config: Pick<Config, 'mail' | 'nodeEnv'>, logger: Logger): Mailer | undefined {
  const { smtpUrl, from } = config.mail;
  if (smtpUrl) {
    const transport = createTransport({
      url: smtpUrl,
      // Bounded waits: a dead SMTP server must not hold messages (and memory) for minutes.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    return queued('smtp', logger, async (message) => {
      await transport.sendMail({ from, ...message });
    });
  }
  if (config.nodeEnv === 'production') return undefined;
  return queued('log', logger, async (message) => {
    // Deliberately includes the text (a reset code): without SMTP, the log is where a developer reads it.
    logger.warn({ mail: { from, ...message } }, 'SMTP_URL is not set: mail written to the log instead of being sent');
  });
}

function queued(kind: Mailer['kind'], logger: Logger, deliver: (message: MailMessage) => Promise<void>): Mailer {
  let pending = 0;
  let tail: Promise<void> = Promise.resolve();
  return {
    kind,
    send(message) {
      if (pending >= MAIL_QUEUE_LIMIT) {
        logger.error({ pending }, 'mail queue full: message dropped');
        return false;
      }
      pending += 1;
      // One at a time, in order: a reset code never overtakes the notice sent before it.
      tail = tail
        .then(() => deliver(message))
        .catch((error: unknown) => logger.error({ err: error instanceof Error ? { message: error.message, code: (error as { code?: unknown }).code } : String(error), subject: message.subject }, 'mail could not be sent'))
        .finally(() => {
          pending -= 1;
        });
      return true;
    },
  };
}
