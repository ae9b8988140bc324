// Issue 28: the TURN slice of the configuration and the credentials in the TURN REST scheme
// (what coturn checks is in test/turn/coturn.test.ts).
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { iceServersFor, isTurnUserKey, turnCredential } from '../../src/turn/index.js';

const SECRET = 'a-turn-secret-of-some-length';
const URLS = 'turn:turn.example.com:3478?transport=udp,turn:turn.example.com:3478?transport=tcp,turns:turn.example.com:443?transport=tcp';

function issuesOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected loadConfig to throw');
}

describe('TURN configuration', () => {
  it('is off by default: no TURN, TTL 300 s, its own rate limit', () => {
    const config = loadConfig({});
    expect(config.turn).toBeUndefined();
    expect(config.iceServersPerMin).toBe(60);
  });

  it('takes the URLs, the secret and the TTL', () => {
    const config = loadConfig({ TURN_URLS: ` ${URLS} `, TURN_SECRET: SECRET, TURN_CREDENTIAL_TTL_S: '600' });
    expect(config.turn).toEqual({ urls: URLS.split(','), secret: SECRET, credentialTtlS: 600 });
    expect(loadConfig({ TURN_URLS: 'turn:10.0.0.1', TURN_SECRET: SECRET }).turn?.credentialTtlS).toBe(300);
    expect(loadConfig({ TURN_URLS: 'turn:[2001:db8::1]:3478', TURN_SECRET: SECRET }).turn?.urls).toEqual(['turn:[2001:db8::1]:3478']);
  });

  it('wants both or neither of TURN_URLS and TURN_SECRET', () => {
    expect(issuesOf({ TURN_URLS: URLS })).toEqual([expect.stringMatching(/^TURN_SECRET: /)]);
    expect(issuesOf({ TURN_SECRET: SECRET })).toEqual([expect.stringMatching(/^TURN_URLS: /)]);
    expect(loadConfig({ TURN_URLS: ' ', TURN_SECRET: '' }).turn).toBeUndefined();
  });

  it('refuses a bad URL naming the variable, and bounds everything', () => {
    for (const bad of ['stun:turn.example.com', 'http://turn.example.com', 'turn:', 'turn:host:0', 'turn:host:70000', 'turns:host:443?transport=udp', 'turn:host?transport=sctp', 'turn:ho st']) {
      expect(issuesOf({ TURN_URLS: bad, TURN_SECRET: SECRET }), bad).toEqual([expect.stringMatching(/^TURN_URLS: /)]);
    }
    expect(issuesOf({ TURN_URLS: Array.from({ length: 17 }, (_, i) => `turn:h${i}`).join(','), TURN_SECRET: SECRET })).toEqual(['TURN_URLS: at most 16 URLs']);
    expect(issuesOf({ TURN_URLS: URLS, TURN_SECRET: 'short' })).toEqual([expect.stringMatching(/^TURN_SECRET: /)]);
    expect(issuesOf({ TURN_URLS: URLS, TURN_SECRET: 'x'.repeat(1025) })).toEqual([expect.stringMatching(/^TURN_SECRET: /)]);
    expect(issuesOf({ TURN_CREDENTIAL_TTL_S: '59' })).toEqual([expect.stringMatching(/^TURN_CREDENTIAL_TTL_S: /)]);
    expect(issuesOf({ TURN_CREDENTIAL_TTL_S: '172801' })).toEqual([expect.stringMatching(/^TURN_CREDENTIAL_TTL_S: /)]);
    expect(issuesOf({ RATE_LIMIT_ICE_SERVERS_PER_MIN: '-1' })).toEqual([expect.stringMatching(/^RATE_LIMIT_ICE_SERVERS_PER_MIN: /)]);
  });

  it('never puts the secret into its error messages', () => {
    const secret = 'the-secret-that-must-not-be-echoed';
    const text = issuesOf({ TURN_SECRET: secret, TURN_URLS: 'nope' }).join('\n');
    expect(text).not.toContain(secret);
  });
});

describe('credentials in the TURN REST scheme', () => {
  const turn = { urls: URLS.split(','), secret: SECRET, credentialTtlS: 3600 };
  const now = new Date('2026-11-26T10:00:00.000Z');

  it('username <expiry>:<user key>, credential base64(HMAC-SHA1(secret, username))', () => {
    const answer = iceServersFor(turn, '42', now);
    const expiry = Math.floor(now.getTime() / 1000) + 3600;
    expect(answer.expiresIn).toBe(3600);
    expect(answer.iceServers).toHaveLength(1);
    const [server] = answer.iceServers;
    expect(server!.urls).toEqual(turn.urls);
    expect(server!.username).toBe(`${expiry}:42`);
    expect(server!.credential).toBe(createHmac('sha1', SECRET).update(`${expiry}:42`).digest('base64'));
    expect(server!.credential).toBe(turnCredential(SECRET, server!.username));
    expect(JSON.stringify(answer)).not.toContain(SECRET);
  });

  it('a key that does not fit a username is replaced by a random one', () => {
    expect(isTurnUserKey('user_1@example.com')).toBe(true);
    for (const key of ['', 'a:b', 'with space', 'x'.repeat(129), 'ünï']) {
      expect(isTurnUserKey(key), key).toBe(false);
      const { username } = iceServersFor(turn, key, now).iceServers[0]!;
      const userPart = username.slice(username.indexOf(':') + 1);
      expect(isTurnUserKey(userPart)).toBe(true);
      expect(userPart).not.toBe(key);
    }
  });
});
