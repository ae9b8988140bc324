// Issue 32 #6: nobody but the owner can keep an account from receiving a working reset code. Client
// addresses are simulated with TRUST_PROXY=xff and X-Forwarded-For; mail goes to a real SMTP server.
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { authEvents } from '../../src/db/schema.js';
import { codeOf } from '../support/smtp.js';
import { call, expectError, expectOk, register, type Registered, type Reply, useMailingApp } from './helpers.js';

const { t, smtp } = useMailingApp({ TRUST_PROXY: 'xff', PASSWORD_RESET_REQUESTS_PER_SOURCE: '10', PASSWORD_RESET_GUESSES_PER_SOURCE: '10' });

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

describe('password reset cannot be blocked from other addresses (issue 32 #6)', () => {
  it('after a flood of forgot requests and wrong guesses from 20 other addresses, the owner still gets a working code', async () => {
    const ownerIp = freshIp();
    const owner = await register(t.app, {});
    // The owner has signed in from its address before (the audit trail knows it).
    expectOk(await call(t.app, 'POST', '/login', { body: { account: owner.username, password: owner.password }, headers: from(ownerIp) }));

    const attackers = Array.from({ length: 20 }, freshIp);
    const flood = await Promise.all(
      attackers.map(async (ip) => {
        const answers: number[] = [];
        for (let i = 0; i < 5; i++) answers.push((await forgot(owner.email, ip)).status);
        for (const wrong of wrongCodes(12)) answers.push((await reset(owner.email, wrong, ip)).status);
        return answers;
      }),
    );
    for (const answers of flood) for (const status of answers) expect([200, 400, 429]).toContain(status);
    await mailDrained();
    const seen = codeMails(owner.email).length;

    // The owner asks from its own address: a code arrives.
    expectOk(await forgot(owner.email, ownerIp));
    const code = await nextCode(owner, seen);
    // The attack goes on from fresh addresses: wrong guesses do not use up the owner's tries.
    for (const ip of Array.from({ length: 4 }, freshIp)) for (const wrong of wrongCodes(6, [code])) await reset(owner.email, wrong, ip);
    expectOk(await reset(owner.email, code, ownerIp));
    expectOk(await login(owner.username, 'a brand new pass'));
  });

  it('a few other addresses asking for codes do not stop an owner asking from an address never seen before', async () => {
    const owner = await register(t.app);
    for (const ip of Array.from({ length: 3 }, freshIp)) for (let i = 0; i < 5; i++) await forgot(owner.email, ip);
    await mailDrained();
    const seen = codeMails(owner.email).length;
    const ownerIp = freshIp();
    expectOk(await forgot(owner.email, ownerIp));
    const code = await nextCode(owner, seen);
    expectOk(await reset(owner.email, code, ownerIp));
  });

  it('a throttled address gets 429 with Retry-After, the same for a registered and an unknown e-mail', async () => {
    const user = await register(t.app);
    const ip = freshIp();
    for (let i = 0; i < 3; i++) expectOk(await forgot(user.email, ip));
    // A fourth request for the same address from the same client.
    const known = await forgot(user.email, ip);
    expectThrottled(known);
    const unknownEmail = `nobody_${Date.now()}@example.com`;
    for (let i = 0; i < 3; i++) expectOk(await forgot(unknownEmail, ip));
    const unknown = await forgot(unknownEmail, ip);
    expectThrottled(unknown);
    expect(unknown.body).toEqual(known.body);
    // 10 requests in all per client and hour, whatever the addresses.
    const busy = freshIp();
    for (let i = 0; i < 10; i++) expectOk(await forgot(`someone_${i}_${Date.now()}@example.com`, busy));
    const eleventhUnknown = await forgot(`another_${Date.now()}@example.com`, busy);
    const eleventhKnown = await forgot(user.email, busy);
    expectThrottled(eleventhUnknown);
    expectThrottled(eleventhKnown);
    expect(eleventhKnown.body).toEqual(eleventhUnknown.body);
    // Other clients are not affected.
    expectOk(await forgot(user.email, freshIp()));
  });

  it('a client that guessed wrong 10 times gets 429 for any e-mail, before any code is tried', async () => {
    const user = await register(t.app);
    const ownerIp = freshIp();
    expectOk(await forgot(user.email, ownerIp));
    const code = await nextCode(user, 0);
    const guesser = freshIp();
    for (const wrong of wrongCodes(10, [code])) expectError(await reset(user.email, wrong, guesser), 400, 2005);
    expectThrottled(await reset(user.email, code, guesser));
    expectThrottled(await reset(`nobody_${Date.now()}@example.com`, '123456', guesser));
    // The guesser used up the tries other addresses have; the owner's own are intact.
    expectOk(await reset(user.email, code, ownerIp));
  });

  it('mails at most 10 codes an hour per account from addresses it has not signed in from, and still one to an address it has', async () => {
    const user = await register(t.app);
    const knownIp = freshIp();
    expectOk(await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password }, headers: from(knownIp) }));
    // 12 requests from 4 addresses (3 each, their budget for one e-mail): 10 codes mailed, 2 not.
    for (const ip of Array.from({ length: 4 }, freshIp)) for (let i = 0; i < 3; i++) expectOk(await forgot(user.email, ip));
    await mailDrained();
    expect(codeMails(user.email)).toHaveLength(10);
    // The same answer, and no mail, for an address never seen.
    expectOk(await forgot(user.email, freshIp()));
    await mailDrained();
    expect(codeMails(user.email)).toHaveLength(10);
    // An address the account signed in from still gets its code.
    expectOk(await forgot(user.email, knownIp));
    const code = await nextCode(user, 10);
    const events = await t.database.db.select().from(authEvents).where(eq(authEvents.userId, user.id));
    const details = events.filter((e) => e.type === 'password_reset_requested').map((e) => e.detail);
    expect(details.filter((d) => d === 'code_sent')).toHaveLength(11);
    expect(details.filter((d) => d === 'hourly_limit')).toHaveLength(3);
    expectOk(await reset(user.email, code, knownIp));
  });

  it('every code mailed in the last 15 minutes works: a later one does not replace it', async () => {
    const user = await register(t.app);
    const ip = freshIp();
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) {
      expectOk(await forgot(user.email, ip));
      codes.push(await nextCode(user, i));
    }
    // The first code still works although two were mailed after it.
    expectOk(await reset(user.email, codes[0]!, ip));
  });
});
