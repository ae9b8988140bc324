// Issue 32 #6: nobody but the owner can keep an account from receiving a working reset code, even after a
// flood of requests and guesses from 20 addresses (340 requests, hashing: it runs alone, vitest.config.ts).
// Client addresses are simulated with TRUST_PROXY=xff and X-Forwarded-For; mail goes to a real SMTP server.
// The other per-source rules are in password-reset-sources.test.ts.
import { describe, expect, it } from 'vitest';
import { call, expectOk, register, useMailingApp } from './helpers.js';
import { RESET_SOURCES_ENV, resetSources } from './reset-sources.js';

const { t, smtp } = useMailingApp(RESET_SOURCES_ENV);
const { freshIp, from, forgot, reset, login, codeMails, mailDrained, nextCode, wrongCodes } = resetSources(t, smtp);

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
});
