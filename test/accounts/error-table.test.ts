// The one error table of the account API: every kind is answered with its code, status and message.
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_ERRORS, ApiCode, type AccountErrorKind } from '../../src/accounts/shared/error-table.js';
import { AuthError } from '../../src/accounts/shared/auth-error.js';
import { handleApiError } from '../../src/accounts/shared/api-errors.js';

function appThrowing(error: () => unknown) {
  const app = new Hono();
  app.get('/api/x', () => {
    throw error();
  });
  app.onError((e, c) => handleApiError(e, c, pino({ level: 'silent' })));
  return app;
}

describe('the error table', () => {
  it.each(Object.keys(ACCOUNT_ERRORS) as AccountErrorKind[])('answers %s with its code, status and message', async (kind) => {
    const row = ACCOUNT_ERRORS[kind];
    const res = await appThrowing(() => new AuthError(kind)).request('/api/x');
    expect(res.status).toBe(row.status);
    expect(await res.json()).toEqual({ code: row.code, message: row.message, data: null });
  });

  it('uses only the codes of ApiCode, and 0 for none of them', () => {
    const codes = new Set<number>(Object.values(ApiCode));
    for (const row of Object.values(ACCOUNT_ERRORS)) {
      expect(codes).toContain(row.code);
      expect(row.code).not.toBe(ApiCode.OK);
    }
  });

  it('adds WWW-Authenticate to a bad access token and Retry-After where the failure gives one', async () => {
    const bad = await appThrowing(() => new AuthError('invalid_access_token')).request('/api/x');
    expect(bad.headers.get('www-authenticate')).toBe('Bearer realm="api"');
    const busy = await appThrowing(() => new AuthError('server_busy', undefined, 3)).request('/api/x');
    expect(busy.headers.get('retry-after')).toBe('3');
  });

  it.each([
    [413, 'body_too_large'],
    [400, 'malformed_json'],
    [415, 'not_json'],
  ] as const)("answers Hono's HTTPException %i as %s", async (status, kind) => {
    const res = await appThrowing(() => new HTTPException(status)).request('/api/x');
    expect(res.status).toBe(ACCOUNT_ERRORS[kind].status);
    expect(await res.json()).toEqual({ code: ACCOUNT_ERRORS[kind].code, message: ACCOUNT_ERRORS[kind].message, data: null });
  });
});
