// Outgoing mail: nodemailer over SMTP (SMTP_URL), or the log outside production when no SMTP server
// is configured. Sending is queued, never awaited by a request: an answer's timing must not depend
// on the SMTP server (a forgot-password answer would otherwise tell whether the e-mail exists).
// Two queues, each with its own sender: codes (a user is waiting for them) and notices, so no
// number of notices can delay or crowd out a code.
import { createTransport } from 'nodemailer';
import type { Config } from '../config/index.js';
import type { Logger } from '../logger.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** `code`: a message a user waits for (a reset code); `notice`: information (a password was changed). */
export type MailKind = 'code' | 'notice';

/** A place held in a queue: filled with a message, or given back. Exactly one of the two, once. */
export interface MailSlot {
  send(message: MailMessage): void;
  release(): void;
}

export interface Mailer {
  /** `smtp` delivers; `log` writes each message to the log at warn (development only). */
  readonly kind: 'smtp' | 'log';
  /**
   * Holds a place in the queue of `kind`, or undefined when it is full. A caller that must answer
   * differently when no mail can go out (a reset code) reserves before it does anything else.
   */
  reserve(kind: MailKind): MailSlot | undefined;
  /** Queues a message; false (logged, counted) when its queue is full and it was dropped. */
  send(message: MailMessage, kind: MailKind): boolean;
  /** Messages held per queue (waiting, being sent, or reserved). */
  pending(): Record<MailKind, number>;
  /** Seconds until the code queue has likely room again (from the recent delivery times). */
  retryAfterS(): number;
  /** Messages dropped so far because their queue was full. */
  dropped(): Record<MailKind, number>;
}

/**
 * Messages held at once per queue; beyond it a code request is refused (503) and a notice dropped
 * (logged), so a flood cannot grow memory. Together the former single queue's 200.
 */
export const MAIL_QUEUE_LIMITS: Readonly<Record<MailKind, number>> = { code: 100, notice: 100 };

/**
 * The mailer for this configuration, or undefined when mail is off (production without SMTP_URL).
 * @example const mailer = createMailer(config, logger); mailer?.send({ to, subject, text }, 'notice')
 */
export function createMailer(config: Pick<Config, 'mail' | 'nodeEnv'>, logger: Logger, limits: Record<MailKind, number> = MAIL_QUEUE_LIMITS): Mailer | undefined {
  const { smtpUrl, from } = config.mail;
  if (smtpUrl) {
    const transport = createTransport({
      url: smtpUrl,
      // Bounded waits: a dead SMTP server must not hold messages (and memory) for minutes.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    return queued('smtp', logger, limits, async (message) => {
      await transport.sendMail({ from, ...message });
    });
  }
  if (config.nodeEnv === 'production') return undefined;
  return queued('log', logger, limits, (message) => {
    // Deliberately includes the text (a reset code): without SMTP, the log is where a developer reads it.
    logger.warn({ mail: { from, ...message } }, 'SMTP_URL is not set: mail written to the log instead of being sent');
    return Promise.resolve();
  });
}

/** One queue and its sender: one message at a time, in order. */
class Lane {
  held = 0;
  dropped = 0;
  private tail: Promise<void> = Promise.resolve();
  /** Recent delivery time, ms (exponentially weighted). */
  private averageMs = 1000;

  constructor(
    readonly kind: MailKind,
    readonly limit: number,
    private readonly logger: Logger,
    private readonly deliver: (message: MailMessage) => Promise<void>,
  ) {}

  reserve(): MailSlot | undefined {
    if (this.held >= this.limit) return undefined;
    this.held += 1;
    let done = false;
    return {
      send: (message) => {
        if (done) throw new Error('mail slot already used');
        done = true;
        this.enqueue(message);
      },
      release: () => {
        if (done) return;
        done = true;
        this.held -= 1;
      },
    };
  }

  retryAfterS(): number {
    return Math.min(600, Math.max(1, Math.ceil((this.held * this.averageMs) / 1000)));
  }

  private enqueue(message: MailMessage): void {
    this.tail = this.tail
      .then(async () => {
        const started = performance.now();
        try {
          await this.deliver(message);
        } finally {
          this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - started);
        }
      })
      .catch((error: unknown) =>
        this.logger.error(
          { err: error instanceof Error ? { message: error.message, code: (error as { code?: unknown }).code } : String(error), subject: message.subject, queue: this.kind },
          'mail could not be sent',
        ),
      )
      .finally(() => {
        this.held -= 1;
      });
  }
}

function queued(kind: Mailer['kind'], logger: Logger, limits: Record<MailKind, number>, deliver: (message: MailMessage) => Promise<void>): Mailer {
  const lanes: Record<MailKind, Lane> = {
    code: new Lane('code', limits.code, logger, deliver),
    notice: new Lane('notice', limits.notice, logger, deliver),
  };
  return {
    kind,
    reserve: (queue) => lanes[queue].reserve(),
    send(message, queue) {
      const slot = lanes[queue].reserve();
      if (!slot) {
        lanes[queue].dropped += 1;
        logger.error({ queue, pending: lanes[queue].held, dropped: lanes[queue].dropped, subject: message.subject }, 'mail queue full: message dropped');
        return false;
      }
      slot.send(message);
      return true;
    },
    pending: () => ({ code: lanes.code.held, notice: lanes.notice.held }),
    retryAfterS: () => lanes.code.retryAfterS(),
    dropped: () => ({ code: lanes.code.dropped, notice: lanes.notice.dropped }),
  };
}
