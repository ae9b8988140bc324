// A real SMTP server in the test process (smtp-server), on 127.0.0.1 and a free port: the app's
// nodemailer delivers to it, and tests read what arrived.
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  /** The text body, quoted-printable soft breaks undone. */
  text: string;
}

export interface TestSmtp {
  url: string;
  received: ReceivedMail[];
  /** How long the server takes to accept each message from now on (a slow SMTP server), ms. */
  setDelay(ms: number): void;
  /** Resolves with the first message (received from now on or already) that matches, within `timeoutMs`. */
  waitFor(match: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

function decode(raw: string): { subject: string; text: string } {
  const [head = '', ...rest] = raw.split(/\r?\n\r?\n/);
  const subject = /^Subject: (.*)$/im.exec(head)?.[1]?.trim() ?? '';
  let body = rest.join('\n\n');
  if (/content-transfer-encoding: quoted-printable/i.test(head)) {
    body = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  return { subject, text: body };
}

/**
 * @param options.delayMs how long the server takes to accept each message (after its data arrived);
 *   changeable later with setDelay
 */
export async function startTestSmtp(options: { delayMs?: number } = {}): Promise<TestSmtp> {
  let delayMs = options.delayMs ?? 0;
  const received: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    size: 1024 * 1024,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const accept = () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            ...decode(raw),
          });
          for (const wake of waiters) wake();
          callback();
        };
        if (delayMs > 0) setTimeout(accept, delayMs);
        else accept();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    setDelay(ms) {
      delayMs = ms;
    },
    waitFor(match, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = received.find(match);
          if (!found) return false;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(found);
          return true;
        };
        const wake = () => void check();
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`no matching mail within ${timeoutMs} ms (${received.length} received)`));
        }, timeoutMs);
        waiters.add(wake);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The 6-digit code of a reset message. */
export function codeOf(mail: ReceivedMail): string {
  const match = /Your code: ([0-9]{6})/.exec(mail.text);
  if (!match) throw new Error(`no code in: ${mail.text.slice(0, 200)}`);
  return match[1]!;
}
