// Several instances on one database, as real processes: they agree or refuse to start, never fail
// silently. On PostgreSQL (the `postgres` project): two instances with different AUTH_KEY_SECRETs
// (the second refuses to start naming the variable, instead of answering 500 to every login); two
// instances started at once on a fresh database (both come up: the migrations run under an advisory
// lock); the release command with DATABASE_URL alone. The secret case runs on PGlite too, one process
// after the other on one DATA_DIR.
import { spawn } from 'node:child_process';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { usesPostgres } from '../support/app.js';
import { freshPostgres as freshDb, removeSharedDatabases, sharedDatabase as sharedDb } from '../support/shared-database.js';
import { ROOT, startServer, type ServerProcess } from '../support/server-process.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await removeSharedDatabases();
}, 60_000);

const freshPostgres = () => freshDb('instances');
const sharedDatabase = () => sharedDb('instances');

async function login(server: ServerProcess, route: string, body: unknown): Promise<{ status: number; code: number }> {
  const res = await fetch(`${server.url}/api/v1/auth${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, code: ((await res.json()) as { code: number }).code };
}

const SECRET_A = `instance-a-secret-${'a'.repeat(32)}`;
const SECRET_B = `instance-b-secret-${'b'.repeat(32)}`;

it('an instance whose AUTH_KEY_SECRET cannot open the stored signing keys refuses to start, naming the variable', { timeout: 240_000 }, async () => {
  const database = await sharedDatabase();
  const a = await startServer({ ...database, AUTH_KEY_SECRET: SECRET_A }, { timeoutMs: 90_000 });
  cleanups.push(() => a.stop());
  const username = `instances_${Date.now()}`;
  expect(await login(a, '/register', { username, email: `${username}@example.com`, password: 'instances-Secret-pw' })).toEqual({ status: 200, code: 0 });
  // PGlite's folder is one process's: the second instance comes after the first.
  if (!usesPostgres()) await a.stop();

  const b = startServer({ ...database, AUTH_KEY_SECRET: SECRET_B }, { timeoutMs: 90_000 });
  // Should it start after all, it is stopped with the others.
  void b.then((server) => cleanups.push(() => server.stop()), () => {});
  await expect(b).rejects.toThrow(/AUTH_KEY_SECRET differs from the one the stored signing key \S+ was sealed under/);
  await expect(b).rejects.not.toThrow(new RegExp(SECRET_B));

  // The same secret is welcome, and signs with the stored keys.
  const again = await startServer({ ...database, AUTH_KEY_SECRET: SECRET_A }, { timeoutMs: 90_000 });
  cleanups.push(() => again.stop());
  expect(await login(again, '/login', { account: username, password: 'instances-Secret-pw' })).toEqual({ status: 200, code: 0 });
});

describe.runIf(usesPostgres())('on PostgreSQL', () => {
  it('migrations from several connections at once on a fresh database: one applies them, the others wait and find nothing to do', { timeout: 120_000 }, async () => {
    const url = await freshPostgres();
    const databases = await Promise.all([1, 2, 3, 4].map(() => openDatabase({ kind: 'postgres', url })));
    try {
      const results = await Promise.allSettled(databases.map((database) => migrateDatabase(database)));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    } finally {
      await Promise.all(databases.map((database) => database.close()));
    }
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      // Each migration recorded once.
      const [row] = await sql<{ count: number; distinct: number }[]>`select count(*)::int as count, count(distinct hash)::int as distinct from drizzle.__drizzle_migrations`;
      expect(row!.count).toBe(row!.distinct);
      expect(row!.count).toBeGreaterThan(0);
    } finally {
      await sql.end();
    }
  });

  it('two instances started at once on a fresh database both come up, and accept each other\'s tokens with one AUTH_ISSUER', { timeout: 240_000 }, async () => {
    const database = await sharedDatabase();
    const env = { ...database, AUTH_KEY_SECRET: SECRET_A, AUTH_ISSUER: 'https://instances.example' };
    const [a, b] = await Promise.all([startServer(env, { timeoutMs: 120_000 }), startServer(env, { timeoutMs: 120_000 })]);
    cleanups.push(() => a.stop(), () => b.stop());
    const username = `together_${Date.now()}`;
    const res = await fetch(`${a.url}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, email: `${username}@example.com`, password: 'together-Secret-pw' }) });
    const token = ((await res.json()) as { data: { token: string } }).data.token;
    const profile = await fetch(`${b.url}/api/v1/auth/profile`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await profile.json()) as { code: number }).code).toBe(0);
  });

  it('the release command runs with DATABASE_URL alone, in production', { timeout: 120_000 }, async () => {
    const url = await freshPostgres();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/db/migrate-cli.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'production', DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect({ code, output: output.trim() }).toEqual({ code: 0, output: 'migrations applied (postgres)' });
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const tables = await sql`select table_name from information_schema.tables where table_schema = 'public'`;
      expect(tables.length).toBeGreaterThan(5);
    } finally {
      await sql.end();
    }
  });
});
