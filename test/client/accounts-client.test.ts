// The typed client's account operations against the real app (accounts only): introspection and
// moderation, typed by the account area's contract.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRelayClient, RelayClientError, type RelayClient } from '../../src/client/relay-client.js';
import { APP_TIMEOUT, call, expectError, register } from '../accounts/helpers.js';
import { buildTestApp, TEST_INTERNAL_TOKEN, type TestApp } from '../support/app.js';

let t: TestApp;
let client: RelayClient;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { relay: false } });
  client = createRelayClient({ baseUrl: 'http://service.test', token: TEST_INTERNAL_TOKEN, fetch: t.app.request });
}, APP_TIMEOUT);
afterAll(() => t.close(), APP_TIMEOUT);

it('introspects, bans, finds and unbans a user', async () => {
  const user = await register(t.app);
  const active = await client.introspect(user.tokens.token);
  expect(active.active && active.sub).toBe(String(user.id));

  const banned = await client.ban(user.id, { reason: 'spam' });
  expect(banned.ban).toMatchObject({ until: null, reason: 'spam' });
  expect(await client.introspect(user.tokens.token)).toEqual({ active: false });
  expectError(await call(t.app, 'POST', '/login', { body: { account: user.username, password: user.password } }), 403, 2006);

  const page = await client.users({ query: user.username, limit: 5 });
  expect(page.users.map((u) => u.id)).toEqual([user.id]);
  expect((await client.user(user.id)).sessions).toBe(0);

  expect((await client.unban(user.id)).ban).toBeNull();
  const error = await client.ban(2_147_483_647).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RelayClientError);
  expect((error as RelayClientError).code).toBe('NOT_FOUND');
});
