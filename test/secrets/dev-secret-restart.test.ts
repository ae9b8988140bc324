// The real server without AUTH_KEY_SECRET in development (issue 32 #5): it generates one into
// ${DATA_DIR}/secrets/auth-key-secret (0600), says so once without the value, and after a restart on the same
// DATA_DIR reuses it, so a reset code mailed before the restart still works after it.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { generatedSecret, useDevServers } from '../support/dev-servers.js';
import type { ServerProcess } from '../support/server-process.js';

const { dataDir: tempDataDir, start } = useDevServers();

async function post(server: ServerProcess, route: string, body: unknown): Promise<{ code: number }> {
  const res = await fetch(`${server.url}/api/v1/auth${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await res.json()) as { code: number };
}

it('generates the secret once under DATA_DIR, never prints it, and a restart keeps reset codes valid', async () => {
  const dataDir = await tempDataDir('auth-key-server-');
  // No AUTH_KEY_SECRET, the embedded database on disk; the mail goes to the log (no SMTP_URL).
  const env = { AUTH_KEY_SECRET: '', DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  const first = await start(env, { timeoutMs: 60_000 });
  const file = path.join(dataDir, 'secrets', 'auth-key-secret');
  const secret = await generatedSecret(file);
  expect(first.logLines().filter((l) => /AUTH_KEY_SECRET is not set: generated/.test(l.msg))).toEqual([expect.objectContaining({ file })]);

  const email = `restart_${Date.now()}@example.com`;
  expect((await post(first, '/register', { username: `restart_${Date.now()}`, email, password: 'first-Secret-pw' })).code).toBe(0);
  expect((await post(first, '/password/forgot', { email })).code).toBe(0);
  let code: string | undefined;
  for (let i = 0; i < 100 && !code; i++) {
    // The reset mail's code (registration mailed a verification code first: issue 31).
    const resetMail = first.output().split('\n').find((line) => line.includes('Your password reset code'));
    code = resetMail === undefined ? undefined : /Your code: ([0-9]{6})/.exec(resetMail)?.[1];
    if (!code) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(code).toMatch(/^[0-9]{6}$/);
  await first.stop();
  expect(first.output()).not.toContain(secret);

  const second = await start(env, { timeoutMs: 60_000 });
  expect((await readFile(file, 'utf8')).trim()).toBe(secret);
  expect(second.logLines().filter((l) => /generated/.test(l.msg))).toEqual([]);
  expect((await post(second, '/password/reset', { email, code, new_password: 'second-Secret-pw' })).code).toBe(0);
  await second.stop();
  expect(second.output()).not.toContain(secret);
}, 180_000);
