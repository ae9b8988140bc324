// The auth-profile baseline: GET /api/v1/auth/profile as a bare Hono + postgres.js handler doing the
// same work in two indexed queries (session by access id, then the user by id), with the same
// constant-time digest check, the same envelope and time format. No middleware, no validation, no ORM.
// Started by bench/auth-profile.ts as a child process on the same database as the real server.
import { createHash, timingSafeEqual } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import postgres from 'postgres';
import { formatTime } from '../src/time.js';

const sql = postgres(process.env.DATABASE_URL!, { max: 10, onnotice: () => {} });
const TOKEN = /^Bearer ([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;
const unauthenticated = { code: 1002, message: 'invalid access token', data: null };

const app = new Hono()
  .get('/readyz', async (c) => {
    await sql`select 1`;
    return c.json({ status: 'ready' });
  })
  .get('/api/v1/auth/profile', async (c) => {
    const match = TOKEN.exec(c.req.header('authorization') ?? '');
    if (!match) return c.json(unauthenticated, 401);
    const [session] = await sql`select user_id, access_hash, access_expires_at from sessions where access_id = ${match[1]!}`;
    const presented = createHash('sha256').update(match[2]!).digest();
    const stored = Buffer.from(session?.access_hash ?? '', 'hex');
    if (!session || stored.length !== presented.length || !timingSafeEqual(stored, presented) || session.access_expires_at <= new Date()) {
      return c.json(unauthenticated, 401);
    }
    const [user] = await sql`select id, username, email, nickname, avatar, gender, phone, roles, created_at from users where id = ${session.user_id}`;
    if (!user) return c.json(unauthenticated, 401);
    return c.json({
      code: 0,
      message: 'ok',
      data: { ...user, roles: [...user.roles], created_at: formatTime(user.created_at as Date) },
    });
  });

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' });
process.on('SIGTERM', () => {
  server.close();
  void sql.end({ timeout: 1 }).then(() => process.exit(0));
});
