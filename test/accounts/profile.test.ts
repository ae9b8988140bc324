import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTime } from '../../src/time.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, call, expectError, expectOk, register, TIME_FORMAT, uniqueName } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { relay: false } });
}, APP_TIMEOUT);
afterAll(() => t.close(), APP_TIMEOUT);

const PROFILE_KEYS = ['avatar', 'created_at', 'email', 'email_verified', 'gender', 'id', 'nickname', 'phone', 'roles', 'username'];

describe('GET /profile', () => {
  it('returns exactly the profile fields, created_at as yyyy-MM-dd HH:mm:ss', async () => {
    const user = await register(t.app, { nickname: 'Trinity' });
    const reply = await call(t.app, 'GET', '/profile', { token: user.tokens.token });
    expectOk(reply);
    expect(Object.keys(reply.body.data).sort()).toEqual(PROFILE_KEYS);
    expect(reply.body.data).toEqual({
      id: user.id,
      username: user.username,
      email: user.email,
      nickname: 'Trinity',
      avatar: '',
      gender: 0,
      phone: '',
      roles: ['user'],
      created_at: expect.stringMatching(TIME_FORMAT),
      email_verified: false,
    });
  });

  it('needs an access token', async () => {
    expectError(await call(t.app, 'GET', '/profile'), 401, 1002);
  });
});

describe('time format', () => {
  it('renders created_at in Asia/Shanghai (UTC+8, no daylight saving)', async () => {
    const clock = new Date('2024-12-31T16:30:05.678Z');
    const app = await buildTestApp({}, { now: () => clock, areas: { relay: false } });
    try {
      const user = await register(app.app);
      const reply = await call(app.app, 'GET', '/profile', { token: user.tokens.token });
      expect(reply.body.data.created_at).toBe('2025-01-01 00:30:05');
    } finally {
      await app.close();
    }
  }, APP_TIMEOUT);

  it('formats with zero padding and a 24-hour clock', () => {
    expect(formatTime(new Date('2024-03-04T05:06:07Z'))).toBe('2024-03-04 13:06:07');
    expect(formatTime(new Date('2024-06-30T16:00:00Z'))).toBe('2024-07-01 00:00:00');
    expect(formatTime(new Date('2024-06-30T15:59:59Z'))).toBe('2024-06-30 23:59:59');
  });
});

describe('PUT /profile', () => {
  it('changes only the fields sent and answers the whole profile', async () => {
    const user = await register(t.app, { nickname: 'Before' });
    const token = user.tokens.token;
    const first = await call(t.app, 'PUT', '/profile', { token, body: { gender: 2 } });
    expectOk(first);
    expect(Object.keys(first.body.data).sort()).toEqual(PROFILE_KEYS);
    expect(first.body.data).toMatchObject({ nickname: 'Before', gender: 2, avatar: '', phone: '' });

    const second = await call(t.app, 'PUT', '/profile', {
      token,
      body: { nickname: '新しい名前', avatar: 'https://cdn.example.com/a.png', phone: '+86 (10) 1234-5678' },
    });
    expectOk(second);
    expect(second.body.data).toMatchObject({
      id: user.id,
      username: user.username,
      nickname: '新しい名前',
      avatar: 'https://cdn.example.com/a.png',
      gender: 2,
      phone: '+86 (10) 1234-5678',
      roles: ['user'],
    });
    const read = await call(t.app, 'GET', '/profile', { token });
    expect(read.body.data).toEqual(second.body.data);
  });

  it('accepts an empty object and changes nothing', async () => {
    const user = await register(t.app);
    const before = await call(t.app, 'GET', '/profile', { token: user.tokens.token });
    const reply = await call(t.app, 'PUT', '/profile', { token: user.tokens.token, body: {} });
    expectOk(reply);
    expect(reply.body.data).toEqual(before.body.data);
  });

  it('clears avatar and phone with empty strings', async () => {
    const user = await register(t.app);
    const token = user.tokens.token;
    await call(t.app, 'PUT', '/profile', { token, body: { avatar: 'http://x.example/p.jpg', phone: '12345' } });
    const reply = await call(t.app, 'PUT', '/profile', { token, body: { avatar: '', phone: '' } });
    expect(reply.body.data).toMatchObject({ avatar: '', phone: '' });
  });

  it.each([0, 1, 2])('accepts gender %i', async (gender) => {
    const user = await register(t.app);
    const reply = await call(t.app, 'PUT', '/profile', { token: user.tokens.token, body: { gender } });
    expect(reply.body.data.gender).toBe(gender);
  });

  it.each([
    ['username', { username: uniqueName() }],
    ['email', { email: 'new@example.com' }],
    ['roles', { roles: ['admin'] }],
    ['password', { password: 'new-password' }],
    ['created_at', { created_at: '2020-01-01 00:00:00' }],
  ])('refuses the field %s with 1001 and changes nothing', async (field, body) => {
    const user = await register(t.app);
    const reply = await call(t.app, 'PUT', '/profile', { token: user.tokens.token, body: { nickname: 'Changed', ...body } });
    expectError(reply, 400, 1001);
    expect(reply.body.message.startsWith(`${field}: `)).toBe(true);
    const read = await call(t.app, 'GET', '/profile', { token: user.tokens.token });
    expect(read.body.data.nickname).toBe(user.username);
  });

  it.each([
    ['nickname', { nickname: '' }],
    ['nickname', { nickname: 'n'.repeat(51) }],
    ['nickname', { nickname: null }],
    // The embedded PGlite reads a leading U+FEFF back as nothing: it could not be stored as sent.
    ['nickname', { nickname: '\uFEFFTrinity' }],
    ['avatar', { avatar: 'ftp://example.com/a.png' }],
    ['avatar', { avatar: 'javascript:alert(1)' }],
    ['avatar', { avatar: 'not a url' }],
    ['avatar', { avatar: `https://example.com/${'a'.repeat(500)}` }],
    ['gender', { gender: 3 }],
    ['gender', { gender: '1' }],
    ['gender', { gender: 1.5 }],
    ['phone', { phone: '1234' }],
    ['phone', { phone: '1'.repeat(21) }],
    ['phone', { phone: '555-CALL-NOW' }],
    ['phone', { phone: 13800138000 }],
  ])('refuses an invalid %s with 1001 (%j)', async (field, body) => {
    const user = await register(t.app);
    const reply = await call(t.app, 'PUT', '/profile', { token: user.tokens.token, body });
    expectError(reply, 400, 1001);
    expect(reply.body.message.startsWith(`${field}: `)).toBe(true);
  });

  it('accepts a 50-character nickname and a 512-character avatar URL', async () => {
    const user = await register(t.app);
    const avatar = `https://example.com/${'a'.repeat(512 - 'https://example.com/'.length)}`;
    const reply = await call(t.app, 'PUT', '/profile', { token: user.tokens.token, body: { nickname: '名'.repeat(50), avatar } });
    expectOk(reply);
    expect(reply.body.data.avatar).toHaveLength(512);
  });

  it('needs an access token', async () => {
    expectError(await call(t.app, 'PUT', '/profile', { body: { nickname: 'x' } }), 401, 1002);
  });
});
