// At most one notice of a kind per account and per recipient in a window: later ones are folded
// into one summary sent when the window ends, so no client can flood a mailbox with notices and no
// change goes unreported. Windows live in this process's memory.
import type { Logger } from '../logger.js';
import type { MailMessage, Mailer } from './mailer.js';

/** What was folded into a summary: how many notices, from the first to the last. */
export interface Folded {
  count: number;
  first: Date;
  last: Date;
}

export interface NoticeInput {
  /** The kind of notice, e.g. `password_changed`: windows are per kind. */
  kind: string;
  /** The account it is about (e.g. the user id). */
  account: string;
  to: string;
  /** When the event happened. */
  at: Date;
}

export interface NoticeThrottleOptions {
  mailer: Mailer;
  logger: Logger;
  /** The message of one notice, or (with `folded`) of the summary of those folded in a window. */
  compose: (input: NoticeInput, folded?: Folded) => MailMessage;
  /** Default 10 minutes. */
  windowMs?: number;
  /** Windows tracked at once (each a few hundred bytes); beyond, further notices are dropped and logged. Default 10,000. */
  maxWindows?: number;
}

interface Window {
  until: number;
  /** Folded notices waiting for the end of the window, with the input of the latest. */
  pending?: { input: NoticeInput; folded: Folded };
  timer?: NodeJS.Timeout;
}

export const NOTICE_WINDOW_MS = 10 * 60 * 1000;

/**
 * @example throttle.notify({ kind: 'password_changed', account: String(userId), to: email, at: now })
 */
export class NoticeThrottle {
  private readonly windows = new Map<string, Window>();
  private readonly windowMs: number;
  private readonly maxWindows: number;
  /** Notices folded into a summary, and notices dropped because too many windows were open. */
  readonly counts = { sent: 0, folded: 0, dropped: 0 };

  constructor(private readonly options: NoticeThrottleOptions) {
    this.windowMs = options.windowMs ?? NOTICE_WINDOW_MS;
    this.maxWindows = options.maxWindows ?? 10_000;
  }

  /** Sends the notice now, or folds it into the summary of an open window of its account or recipient. */
  notify(input: NoticeInput): 'sent' | 'folded' | 'dropped' {
    const now = Date.now();
    const keys = this.keysOf(input);
    const open = keys.map((key) => this.windows.get(key)).find((w): w is Window => w !== undefined && w.until > now);
    if (open) {
      const folded: Folded = open.pending ? { ...open.pending.folded, count: open.pending.folded.count + 1, last: input.at } : { count: 1, first: input.at, last: input.at };
      open.pending = { input, folded };
      open.timer ??= this.flushAt(open, keys);
      this.counts.folded += 1;
      this.options.logger.info({ kind: input.kind, account: input.account, folded: folded.count }, 'notice folded into the next summary (one per window)');
      return 'folded';
    }
    if (!this.makeRoom(keys.length)) {
      this.counts.dropped += 1;
      this.options.logger.error({ kind: input.kind, account: input.account, windows: this.windows.size }, 'too many notice windows open: notice dropped');
      return 'dropped';
    }
    const window: Window = { until: now + this.windowMs };
    for (const key of keys) this.windows.set(key, window);
    this.counts.sent += 1;
    this.options.mailer.send(this.options.compose(input), 'notice');
    return 'sent';
  }

  /** Stops the timers (summaries not yet sent are lost, as queued mail is at exit). */
  close(): void {
    for (const window of new Set(this.windows.values())) clearTimeout(window.timer);
    this.windows.clear();
  }

  private keysOf(input: NoticeInput): string[] {
    return [`${input.kind} account ${input.account}`, `${input.kind} to ${input.to.toLowerCase()}`];
  }

  /** At the end of the window: the summary of what was folded, which opens a new window of its own. */
  private flushAt(window: Window, keys: string[]): NodeJS.Timeout {
    const timer = setTimeout(() => {
      window.timer = undefined;
      const pending = window.pending;
      window.pending = undefined;
      for (const key of keys) if (this.windows.get(key) === window) this.windows.delete(key);
      if (!pending) return;
      const next: Window = { until: Date.now() + this.windowMs };
      for (const key of this.keysOf(pending.input)) this.windows.set(key, next);
      this.options.mailer.send(this.options.compose(pending.input, pending.folded), 'notice');
    }, Math.max(0, window.until - Date.now()));
    timer.unref();
    return timer;
  }

  /** Forgets closed windows when the map is full; false when it is still full. */
  private makeRoom(needed: number): boolean {
    if (this.windows.size + needed <= this.maxWindows) return true;
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.until <= now && !window.pending) this.windows.delete(key);
    return this.windows.size + needed <= this.maxWindows;
  }
}
