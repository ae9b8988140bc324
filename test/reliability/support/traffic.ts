// Traffic against a real server process: requests with a deadline, recorded with their outcome, and
// bounded loops (count and time) that keep a mix of account and media requests in flight.
import { randomBytes } from 'node:crypto';
import { SERVER_TOKEN } from '../../support/server-process.js';

export interface Outcome {
  kind: string;
  /** ms since the recorder started. */
  at: number;
  ms: number;
  status: number;
  /** Envelope code for /api, error code for /internal, undefined for a success without body. */
  code: number | string | undefined;
  body: any;
  /** Set when no HTTP answer came (connection refused or reset, deadline). */
  error?: string;
}

export class Recorder {
  readonly outcomes: Outcome[] = [];
  private readonly t0 = performance.now();

  constructor(
    readonly baseUrl: string,
    private readonly deadlineMs = 15_000,
  ) {}

  now(): number {
    return performance.now() - this.t0;
  }

  /** One request; never throws: a missing answer is recorded with `error`. */
  async send(kind: string, method: string, path: string, options: { body?: unknown; token?: string; internal?: boolean } = {}): Promise<Outcome> {
    const headers: Record<string, string> = {};
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.internal) headers['x-internal-token'] = SERVER_TOKEN;
    const at = this.now();
    let outcome: Outcome;
    try {
      const res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.timeout(this.deadlineMs),
      });
      const text = await res.text();
      let body: any;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = text;
      }
      outcome = { kind, at, ms: this.now() - at, status: res.status, code: body?.code, body };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      outcome = { kind, at, ms: this.now() - at, status: 0, code: undefined, body: undefined, error: cause?.code ?? (error as Error).name };
    }
    this.outcomes.push(outcome);
    return outcome;
  }
}

export const uniqueName = (prefix = 'r') => `${prefix}_${randomBytes(6).toString('hex')}`;

export const PASSWORD = 'reliable-pw-1';

/**
 * Runs `step` in `concurrency` loops until `until()` says stop, `maxCount` steps ran or `maxMs`
 * passed, whichever comes first.
 */
export async function loops(
  step: (loop: number, i: number) => Promise<void>,
  { concurrency, maxCount, maxMs, until = () => false }: { concurrency: number; maxCount: number; maxMs: number; until?: () => boolean },
): Promise<number> {
  let started = 0;
  const deadline = performance.now() + maxMs;
  const loop = async (n: number) => {
    while (!until() && started < maxCount && performance.now() < deadline) {
      started += 1;
      await step(n, started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, n) => loop(n)));
  return started;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `intervalMs` until it returns true, or fails after `timeoutMs`. */
export async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000, intervalMs = 50): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if (await check()) return performance.now() - started;
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** A well-formed DTLS fingerprint (SHA-256) and opus parameters: a fake but valid client. */
export function dtls() {
  const value = [...randomBytes(32)].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
  return { role: 'client' as const, fingerprints: [{ algorithm: 'sha-256' as const, value }] };
}

let ssrc = 10_000 + Math.floor(Math.random() * 1_000_000);
export function opus() {
  return {
    codecs: [{ mimeType: 'audio/opus', payloadType: 100, clockRate: 48000, channels: 2, parameters: {}, rtcpFeedback: [] }],
    headerExtensions: [],
    encodings: [{ ssrc: ssrc++ }],
    rtcp: { cname: 'reliability' },
  };
}
