// The password reset's per-source limits seen from many client addresses (TRUST_PROXY=xff and
// X-Forwarded-For simulate them), for password-reset-blocking (the flood, alone) and
// password-reset-sources (the bulk).
import { expect } from 'vitest';
import type { TestApp } from '../support/app.js';
import { codeOf, type TestSmtp } from '../support/smtp.js';
import { call, expectError, expectOk, register, type Registered, type Reply } from './helpers.js';

/** The app's environment these helpers expect: 10 requests and 10 wrong guesses per client address and hour. */
export const RESET_SOURCES_ENV = { TRUST_PROXY: 'xff', PASSWORD_RESET_REQUESTS_PER_SOURCE: '10', PASSWORD_RESET_GUESSES_PER_SOURCE: '10' };

export function resetSources(t: TestApp, smtp: TestSmtp) {
  let nextIp = 1;
  /** A client address no other test of this file uses. */
  const freshIp = () => `198.18.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 1}`;
  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  const forgot = (email: string, ip: string) => call(t.app, 'POST', '/password/forgot', { body: { email }, headers: from(ip) });
  const reset = (email: string, code: string, ip: string, new_password = 'a brand new pass') =>
    call(t.app, 'POST', '/password/reset', { body: { email, code, new_password }, headers: from(ip) });
  const login = (account: string, password: string) => call(t.app, 'POST', '/login', { body: { account, password } });

  const codeMails = (to: string) => smtp.received.filter((m) => m.to.includes(to) && m.subject.includes('reset code'));

  /** Mail is sent in order: once a probe sent now has arrived, every code queued before it has too. */
  async function mailDrained(): Promise<void> {
    const probe = await register(t.app);
    expectOk(await forgot(probe.email, freshIp()));
    // Its reset code, not the verification code its registration mailed first (issue 31).
    await smtp.waitFor((m) => m.to.includes(probe.email) && m.subject.includes('reset code'), 20_000);
  }

  /** The code of the next reset mail to `user` (after the `already` seen so far). */
  async function nextCode(user: Registered, already: number, timeoutMs = 8000): Promise<string> {
    await smtp.waitFor(() => codeMails(user.email).length > already, timeoutMs);
    return codeOf(codeMails(user.email)[already]!);
  }

  function expectThrottled(reply: Reply): void {
    expectError(reply, 429, 1003);
    const retryAfter = Number(reply.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3600, `Retry-After ${reply.headers.get('retry-after')}`).toBe(true);
  }

  /** Wrong 6-digit codes, never `code`. */
  const wrongCodes = (n: number, avoid: string[] = []) =>
    Array.from({ length: n * 2 }, (_, i) => String(100_000 + i * 7919)).filter((c) => !avoid.includes(c)).slice(0, n);

  return { freshIp, from, forgot, reset, login, codeMails, mailDrained, nextCode, expectThrottled, wrongCodes };
}
