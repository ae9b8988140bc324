// coturn itself (Debian's turnserver with the shipped configuration, use-auth-secret) judges the
// credentials src/turn makes: a fresh one allocates a relay; an expired one, one made with another
// secret and one whose username was changed after signing are refused (401 on the Allocate). And the
// shipped bounds hold: a user's allocations stop at the per-user quota while others still get theirs,
// the total quota refuses before the relay ports run out, and an allocation lives at most 120 s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iceServersFor, turnCredential } from '../../src/turn/index.js';
import { startCoturn, TURN_SERVER, type Coturn } from '../support/coturn.js';
import { skipWithout } from '../support/system-programs.js';
import { openTurnSession, turnAllocate, type AllocateOutcome, type TurnSession } from '../support/turn-allocate.js';

const SECRET = 'coturn-test-secret-0123456789';

describe.skipIf(skipWithout(TURN_SERVER))('TURN credentials against a private coturn', () => {
  let coturn: Coturn;
  const turn = () => ({ urls: [coturn.urls.udp], secret: SECRET, credentialTtlS: 600 });

  beforeAll(async () => {
    coturn = await startCoturn({ ip: '127.0.0.1', secret: SECRET, mediaIp: '127.0.0.1' });
  }, 40_000);
  afterAll(async () => {
    await coturn?.stop();
  });

  const allocate = (username: string, credential: string) => turnAllocate(coturn.ip, coturn.port, username, credential);

  it('a fresh credential allocates a relay', async () => {
    const { username, credential } = iceServersFor(turn(), '42', new Date()).iceServers[0]!;
    const outcome = await allocate(username, credential);
    expect(outcome, coturn.log()).toMatchObject({ ok: true });
  });

  it('an expired credential is refused', async () => {
    const { username, credential } = iceServersFor(turn(), '42', new Date(Date.now() - 660_000)).iceServers[0]!;
    expect(Number(username.split(':')[0])).toBeLessThan(Date.now() / 1000);
    expect(await allocate(username, credential)).toMatchObject({ ok: false, errorCode: 401 });
  });

  it('a credential made with another secret is refused', async () => {
    const { username, credential } = iceServersFor({ ...turn(), secret: 'another-secret-0123456789' }, '42', new Date()).iceServers[0]!;
    expect(await allocate(username, credential)).toMatchObject({ ok: false, errorCode: 401 });
  });

  it('a username changed after signing is refused (another user, a later expiry)', async () => {
    const { username, credential } = iceServersFor(turn(), '42', new Date()).iceServers[0]!;
    const [expiry] = username.split(':');
    expect(await allocate(`${expiry}:43`, credential)).toMatchObject({ ok: false, errorCode: 401 });
    expect(await allocate(`${Number(expiry) + 86_400}:42`, credential)).toMatchObject({ ok: false, errorCode: 401 });
    // The same changed username with its own HMAC would pass: it is the signature that refuses it.
    expect(await allocate(`${expiry}:43`, turnCredential(SECRET, `${expiry}:43`))).toMatchObject({ ok: true });
  });

  it('an allocation outlives its credential while refreshed; a new one needs a fresh credential', { timeout: 20_000 }, async () => {
    // Issued 598 s ago with a TTL of 600 s: valid for 2 more seconds.
    const { username, credential } = iceServersFor(turn(), '44', new Date(Date.now() - 598_000)).iceServers[0]!;
    const session = await openTurnSession({ ip: coturn.ip, port: coturn.port, username, password: credential });
    try {
      expect(await session.allocate()).toMatchObject({ ok: true });
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(Number(username.split(':')[0])).toBeLessThan(Date.now() / 1000);
      expect(await session.refresh(120)).toEqual({ ok: true });
      expect(await session.createPermission('127.0.0.1')).toEqual({ ok: true });
      expect(await allocate(username, credential)).toMatchObject({ ok: false, errorCode: 401 });
    } finally {
      await session.close();
    }
  });
});

describe.skipIf(skipWithout(TURN_SERVER))('the shipped bounds, against a private coturn', () => {
  const sessions: TurnSession[] = [];
  const coturns: Coturn[] = [];
  afterAll(async () => {
    for (const session of sessions) await session.close().catch(() => {});
    for (const coturn of coturns) await coturn.stop();
  });

  async function sessionFor(coturn: Coturn, userKey: string, ageS = 0): Promise<TurnSession> {
    const turn = { urls: [coturn.urls.udp], secret: SECRET, credentialTtlS: 600 };
    const { username, credential } = iceServersFor(turn, userKey, new Date(Date.now() - ageS * 1000)).iceServers[0]!;
    const session = await openTurnSession({ ip: coturn.ip, port: coturn.port, username, password: credential });
    sessions.push(session);
    return session;
  }

  it('one user gets 8 allocations at once, whatever credentials it holds; the next is refused (486) while another user still allocates', { timeout: 30_000 }, async () => {
    const coturn = await startCoturn({ ip: '127.0.0.1', secret: SECRET, mediaIp: '127.0.0.1' });
    coturns.push(coturn);
    // Eight credentials of one account (fetched at different times: different usernames), each holding an allocation.
    const held: TurnSession[] = [];
    for (let i = 0; i < 8; i++) {
      const session = await sessionFor(coturn, 'greedy', i * 10);
      expect(await session.allocate(), coturn.log()).toMatchObject({ ok: true });
      held.push(session);
    }
    // A ninth, with yet another fresh credential of the same account: refused.
    expect(await (await sessionFor(coturn, 'greedy', 90)).allocate()).toMatchObject({ ok: false, errorCode: 486 });
    // Others are not affected.
    expect(await (await sessionFor(coturn, 'someone-else')).allocate()).toMatchObject({ ok: true });
    // Once one of the eight is released (coturn frees it within about a second), the account allocates again.
    expect(await held[0]!.refresh(0)).toEqual({ ok: true });
    let again: AllocateOutcome = { ok: false, errorCode: 0, reason: 'not tried' };
    for (let until = Date.now() + 5000; !again.ok && Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 250))) {
      again = await (await sessionFor(coturn, 'greedy', 100)).allocate();
    }
    expect(again).toMatchObject({ ok: true });
  });

  it('the total quota refuses (486) before the relay ports run out (508): half the range', { timeout: 30_000 }, async () => {
    // 8 relay ports: a total quota of 4 allocations.
    const coturn = await startCoturn({ ip: '127.0.0.1', secret: SECRET, mediaIp: '127.0.0.1', relayPorts: { min: 61_200, max: 61_207 } });
    coturns.push(coturn);
    for (let user = 0; user < 4; user++) expect(await (await sessionFor(coturn, `user${user}`)).allocate(), coturn.log()).toMatchObject({ ok: true });
    expect(await (await sessionFor(coturn, 'user4')).allocate()).toMatchObject({ ok: false, errorCode: 486 });
  });

  it('an allocation lives at most 120 s, however long the client asks for', { timeout: 30_000 }, async () => {
    const coturn = await startCoturn({ ip: '127.0.0.1', secret: SECRET, mediaIp: '127.0.0.1' });
    coturns.push(coturn);
    const session = await sessionFor(coturn, 'long-lived');
    expect(await session.allocate({ lifetime: 3600 })).toMatchObject({ ok: true, lifetime: 120 });
  });
});
