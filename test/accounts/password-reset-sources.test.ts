// Issue 32 #6: the password reset's limits per client address and per account, from many addresses
// (TRUST_PROXY=xff and X-Forwarded-For); mail goes to a real SMTP server. The flood is in
// password-reset-blocking.test.ts.
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { authEvents } from '../../src/db/schema.js';
import { call, expectError, expectOk, register, useMailingApp } from './helpers.js';
import { RESET_SOURCES_ENV, resetSources } from './reset-sources.js';

const { t, smtp } = useMailingApp(RESET_SOURCES_ENV);
const { freshIp, from, forgot, reset, codeMails, mailDrained, nextCode, expectThrottled, wrongCodes } = resetSources(t, smtp);

describe('password reset from many client addresses (issue 32 #6)', () => {
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
