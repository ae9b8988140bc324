// Every answer under /api is the envelope, whatever went wrong.
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { Hono } from 'hono';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleApiError } from '../../src/accounts/shared/api-errors.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { APP_TIMEOUT, expectEnvelope, uniqueName } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { relay: false } });
}, APP_TIMEOUT);
afterAll(() => t.close(), APP_TIMEOUT);

async function envelopeOf(res: Response) {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = await res.json();
  expectEnvelope(body);
  return body as { code: number; message: string; data: unknown };
}

describe('the /api envelope', () => {
  it.each(['/api/v1/auth/nothing', '/api/v1/else', '/api', '/api/v2/auth/login'])('answers 404 with 1004 for %s', async (path) => {
    const res = await t.app.request(path, { method: 'POST' });
    expect(res.status).toBe(404);
    expect(await envelopeOf(res)).toMatchObject({ code: 1004, data: null });
  });

  it.each([
    ['GET', '/login', 'POST'],
    ['PUT', '/register', 'POST'],
    ['GET', '/refresh-token', 'POST'],
    ['DELETE', '/profile', 'GET, PUT'],
    ['POST', '/password', 'PUT'],
  ])('answers %s %s with 405, code 1004 and Allow: %s', async (method, path, allow) => {
    const res = await t.app.request(`/api/v1/auth${path}`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')?.split(', ').sort()).toEqual(allow.split(', ').sort());
    expect(await envelopeOf(res)).toMatchObject({ code: 1004, data: null });
  });

  it.each([
    ['malformed JSON', 'application/json', '{"username": "abc",'],
    ['an empty JSON body', 'application/json', ''],
    ['a body that is not declared as JSON', 'text/plain', '{"account":"a","password":"b"}'],
    ['a form body', 'application/x-www-form-urlencoded', 'account=a&password=b'],
    ['no content type', undefined, '{"account":"a","password":"b"}'],
    ['a JSON array', 'application/json', '[]'],
    ['JSON null', 'application/json', 'null'],
    ['a JSON string', 'application/json', '"hello"'],
  ])('answers %s with 400 and 1001', async (_, contentType, body) => {
    const res = await t.app.request('/api/v1/auth/login', {
      method: 'POST',
      headers: contentType ? { 'content-type': contentType } : {},
      body,
    });
    expect(res.status).toBe(400);
    expect(await envelopeOf(res)).toMatchObject({ code: 1001, data: null });
  });

  it('accepts a JSON content type with parameters', async () => {
    const res = await t.app.request('/api/v1/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ account: uniqueName(), password: 'whatever1' }),
    });
    expect(await envelopeOf(res)).toMatchObject({ code: 2004 });
  });

  it('answers a body over 64 KiB with 413 and 1001', async () => {
    const res = await t.app.request('/api/v1/auth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'abc', email: 'a@b.co', password: 'x'.repeat(70 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(await envelopeOf(res)).toMatchObject({ code: 1001, data: null });
  });

  it('answers an internal failure with 500 and 1000, revealing nothing internal', async () => {
    const broken = await buildTestApp({}, { areas: { relay: false } });
    try {
      await broken.database.close();
      const username = uniqueName();
      const res = await broken.app.request('/api/v1/auth/register', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, email: `${username}@example.com`, password: 'secret-pw' }),
      });
      expect(res.status).toBe(500);
      const body = await envelopeOf(res);
      expect(body).toEqual({ code: 1000, message: 'internal error', data: null });
    } finally {
      await broken.close().catch(() => {});
    }
  }, APP_TIMEOUT);
});

describe('handleApiError', () => {
  it('logs a failed query without its parameters (they can hold hashes and token digests)', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    const app = new Hono();
    app.get('/api/boom', () => {
      throw new DrizzleQueryError('insert into "users" ("password_hash") values ($1)', ['$argon2id$secret-hash'], new Error('connection lost'));
    });
    app.onError((error, c) => handleApiError(error, c, logger));
    const res = await app.request('/api/boom');
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ code: 1000, message: 'internal error', data: null });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('insert into');
    expect(lines[0]).toContain('connection lost');
    expect(lines[0]).not.toContain('secret-hash');
  });
});
