// Helpers for the account API tests: requests in the envelope, unique users, token sets. A call's
// answer is typed by the contract: the data of the route's success (any for a path no route has).
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { z } from 'zod';
import type * as accountContract from '../../src/accounts/account/contract.js';
import type * as devicesContract from '../../src/accounts/devices/contract.js';
import type * as emailContract from '../../src/accounts/email/contract.js';
import type * as iceServersContract from '../../src/accounts/ice-servers/contract.js';
import type * as oidcContract from '../../src/accounts/oidc/contract.js';
import type * as passkeysContract from '../../src/accounts/passkeys/contract.js';
import type * as passwordContract from '../../src/accounts/password/contract.js';
import type * as profileContract from '../../src/accounts/profile/contract.js';
import type * as reauthContract from '../../src/accounts/reauth/contract.js';
import type * as resetContract from '../../src/accounts/reset/contract.js';
import type * as sessionsContract from '../../src/accounts/sessions/contract.js';
import type * as totpContract from '../../src/accounts/totp/contract.js';
import { users } from '../../src/db/schema.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { late } from '../support/late.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

export interface Envelope<T = unknown> {
  code: number;
  message: string;
  data: T;
}

export interface Reply<T = unknown> {
  status: number;
  headers: Headers;
  body: Envelope<T>;
}

/** The account API's contracts, every feature's. */
type AccountContract = typeof accountContract &
  typeof devicesContract &
  typeof emailContract &
  typeof iceServersContract &
  typeof oidcContract &
  typeof passkeysContract &
  typeof passwordContract &
  typeof profileContract &
  typeof reauthContract &
  typeof resetContract &
  typeof sessionsContract &
  typeof totpContract;

/** Every route of the contract: its method, its path (with `{id}` parameters) and its success. */
type Route = { [K in keyof AccountContract]: AccountContract[K] extends { method: string; path: string; responses: { 200: unknown } } ? AccountContract[K] : never }[keyof AccountContract];
/** `/sessions/{id}` as the paths a test calls: `/sessions/${string}`. */
type Concrete<P extends string> = P extends `${infer Head}{${string}}${infer Tail}` ? `${Head}${string}${Concrete<Tail>}` : P;
type SuccessOf<R> = R extends { responses: { 200: { content: { 'application/json': { schema: infer S extends z.ZodType } } } } } ? z.output<S> extends { data: infer D } ? D : never : never;
/** The data of the success of `METHOD path`; any for a call no route answers (a wrong method, a path that does not exist). */
export type DataOf<M extends string, P extends string> = [Extract<Route, { method: Lowercase<M> }>] extends [infer R]
  ? R extends { path: infer RP extends string }
    ? P extends Concrete<RP>
      ? SuccessOf<R>
      : never
    : never
  : never;
type Answer<M extends string, P extends string> = [DataOf<M, P>] extends [never] ? any : DataOf<M, P>;

export type TokenSet = sessionsContract.TokenSetView;

type App = TestApp['app'];

/** A JSON request under /api/v1/auth; `token` goes into `Authorization: Bearer`. */
export async function call<M extends string, P extends string, T = Answer<M, P>>(
  app: App,
  method: M,
  path: P,
  options: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const res = await app.request(`/api/v1/auth${path}`, {
    method,
    headers,
    ...(options.body !== undefined ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) } : {}),
  });
  const body = (await res.json()) as Envelope<T>;
  expectEnvelope(body);
  return { status: res.status, headers: res.headers, body };
}

export function expectEnvelope(body: unknown): void {
  expect(Object.keys(body as object).sort()).toEqual(['code', 'data', 'message']);
  const { code, message, data } = body as Envelope;
  expect(typeof code).toBe('number');
  expect(typeof message).toBe('string');
  expect(data).not.toBeUndefined();
  if (code === 0) expect(message).toBe('ok');
  // 2006 (banned) tells until when in its data, 2007 (second factor required) the challenge; every other failure has none.
  else if (code === 2006) expect(Object.keys(data as object)).toEqual(['until']);
  else if (code === 2007) expect(Object.keys(data as object).sort()).toEqual(['methods', 'mfa_token']);
  else expect(data).toBeNull();
}

/** Asserts an error reply: HTTP status and envelope code. */
export function expectError(reply: Reply, status: number, code: number): void {
  expect({ status: reply.status, code: reply.body.code }).toEqual({ status, code });
  if (code !== 2006 && code !== 2007) expect(reply.body.data).toBeNull();
  expect(reply.body.message.length).toBeGreaterThan(0);
}

export function expectOk(reply: Reply): void {
  expect({ status: reply.status, code: reply.body.code, message: reply.body.message }).toEqual({ status: 200, code: 0, message: 'ok' });
}

/** A username no other test uses (tests share a database within a file). */
export function uniqueName(prefix = 'u'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

export interface Registered {
  username: string;
  email: string;
  password: string;
  id: number;
  tokens: TokenSet;
}

export async function register(app: App, overrides: Record<string, unknown> = {}): Promise<Registered> {
  const username = uniqueName();
  const body = { username, email: `${username}@example.com`, password: 'secret-pw', ...overrides };
  const reply = await call(app, 'POST', '/register', { body });
  expectOk(reply);
  const { token, refresh_token, expires_in, user } = reply.body.data;
  return {
    username: body.username,
    email: body.email,
    password: body.password,
    id: user.id,
    tokens: { token, refresh_token, expires_in },
  };
}

/**
 * Marks the user's address verified, as POST /email/verify would: for the tests of what a verified
 * address allows (adding a passkey, turning TOTP on), not of the verification itself (email.test.ts).
 */
export async function markEmailVerified(t: Pick<TestApp, 'database'>, userId: number): Promise<void> {
  await t.database.db.update(users).set({ emailVerifiedAt: new Date() }).where(eq(users.id, userId));
}

/** register(), with the address verified: a user who may add a passkey or turn TOTP on at once. */
export async function registerVerified(t: Pick<TestApp, 'app' | 'database'>, overrides: Record<string, unknown> = {}): Promise<Registered> {
  const user = await register(t.app, overrides);
  await markEmailVerified(t, user.id);
  return user;
}

/**
 * Building or closing an app (database, migrations, media workers) can take seconds on a busy
 * machine; vitest projects do not inherit the root testTimeout/hookTimeout, so hooks say it.
 */
export const APP_TIMEOUT = 60_000;

export const TIME_FORMAT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/**
 * A test app that mails through a real SMTP server of this file, and a clock the test can move
 * (`clock.offsetMs`, back to 0 after each test). `t` and `smtp` are usable inside tests and hooks.
 * @example const { t, smtp, clock } = useMailingApp({ MAIL_FROM: 'Chat <no-reply@chat.test>' })
 */
export function useMailingApp(env: Record<string, string> = {}, options: { smtpDelayMs?: number } = {}): { t: TestApp; smtp: TestSmtp; clock: { offsetMs: number } } {
  const clock = { offsetMs: 0 };
  const app = late<TestApp>('the mailing test app');
  const smtp = late<TestSmtp>('the test SMTP server');
  beforeAll(async () => {
    smtp.set(await startTestSmtp({ delayMs: options.smtpDelayMs ?? 0 }));
    app.set(await buildTestApp({ SMTP_URL: smtp.value.url, ...env }, { now: () => new Date(Date.now() + clock.offsetMs), areas: { relay: false } }));
  }, APP_TIMEOUT);
  afterEach(() => {
    clock.offsetMs = 0;
  });
  afterAll(async () => {
    await app.get()?.close();
    await smtp.get()?.close();
  }, APP_TIMEOUT);
  return { t: app.value, smtp: smtp.value, clock };
}
