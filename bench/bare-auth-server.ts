// The auth-profile baseline: GET /api/v1/auth/profile as a bare Hono + postgres.js handler doing the
// same work: the JWT's EdDSA signature checked (jose, the public keys read from signing_keys once),
// then two indexed queries (session by access id, then the user by id), the same envelope and time
// format. No middleware, no validation, no ORM. Also the introspect baseline: POST /introspect, one
// indexed lookup (session joined to its user by access id) after the same signature check.
// Started by bench/auth-profile.ts and bench/introspect.ts as a child process on the same database as the real server.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { importJWK, jwtVerify, type CryptoKey, type JWK } from 'jose';
import postgres from 'postgres';
import { formatTime } from '../src/time.js';

const sql = postgres(process.env.DATABASE_URL!, { max: 10, onnotice: () => {} });
const TOKEN = /^Bearer (\S+)$/;
const unauthenticated = { code: 1002, message: 'invalid access token', data: null };

/** The published keys, imported once (the real server does the same). */
let keys: Promise<Map<string, CryptoKey>> | undefined;
function keyring(): Promise<Map<string, CryptoKey>> {
  keys ??= (async () => {
    const rows = await sql`select kid, public_jwk from signing_keys`;
    const map = new Map<string, CryptoKey>();
    for (const row of rows) map.set(row.kid as string, (await importJWK(JSON.parse(row.public_jwk as string) as JWK, 'EdDSA')) as CryptoKey);
    return map;
  })();
  return keys;
}

/** The jti of a valid token, or undefined. */
async function accessIdOf(token: string): Promise<string | undefined> {
  const ring = await keyring();
  try {
    const { payload } = await jwtVerify(token, (header) => ring.get(header.kid ?? '')!, { algorithms: ['EdDSA'] });
    return payload.jti;
  } catch {
    return undefined;
  }
}

const app = new Hono()
  .get('/readyz', async (c) => {
    await sql`select 1`;
    return c.json({ status: 'ready' });
  })
  .get('/api/v1/auth/profile', async (c) => {
    const match = TOKEN.exec(c.req.header('authorization') ?? '');
    const accessId = match ? await accessIdOf(match[1]!) : undefined;
    if (!accessId) return c.json(unauthenticated, 401);
    const [session] = await sql`select user_id, access_expires_at from sessions where access_id = ${accessId}`;
    if (!session || session.access_expires_at <= new Date()) return c.json(unauthenticated, 401);
    const [user] = await sql`select id, username, email, nickname, avatar, gender, phone, roles, created_at from users where id = ${session.user_id}`;
    if (!user) return c.json(unauthenticated, 401);
    return c.json({
      code: 0,
      message: 'ok',
      data: { ...user, roles: [...user.roles], created_at: formatTime(user.created_at as Date) },
    });
  })
  .post('/introspect', async (c) => {
    const { token } = await c.req.json<{ token: string }>();
    const accessId = await accessIdOf(token);
    if (!accessId) return c.json({ active: false });
    const [row] = await sql`select s.public_id, s.access_expires_at, u.id, u.username, u.roles from sessions s join users u on u.id = s.user_id where s.access_id = ${accessId}`;
    if (!row || row.access_expires_at <= new Date()) return c.json({ active: false });
    return c.json({ active: true, sub: String(row.id), sid: row.public_id, username: row.username, roles: [...row.roles], token_type: 'access_token' });
  });

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' });
process.on('SIGTERM', () => {
  server.close();
  void sql.end({ timeout: 1 }).then(() => process.exit(0));
});
