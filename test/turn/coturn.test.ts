// Issue 28: coturn itself (Debian's turnserver, use-auth-secret) judges the credentials src/turn makes:
// a fresh one allocates a relay; an expired one, one made with another secret and one whose username
// was changed after signing are refused (401 on the Allocate).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iceServersFor, turnCredential } from '../../src/turn/index.js';
import { startCoturn, TURN_SERVER, type Coturn } from '../support/coturn.js';
import { skipWithout } from '../support/system-programs.js';
import { turnAllocate } from '../support/turn-allocate.js';

const SECRET = 'coturn-test-secret-0123456789';

describe.skipIf(skipWithout(TURN_SERVER))('TURN credentials against a private coturn', () => {
  let coturn: Coturn;
  const turn = () => ({ urls: [coturn.urls.udp], secret: SECRET, credentialTtlS: 600 });

  beforeAll(async () => {
    coturn = await startCoturn({ ip: '127.0.0.1', secret: SECRET, allowedPeers: ['127.0.0.1'] });
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
});
