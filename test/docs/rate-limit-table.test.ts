// The rate-limit table of docs/account-api.md against the routes: every operation of the account API
// counts in the one per-client budget the table names for it. Each budget gets a limit of its own
// here, so the `RateLimit-Policy` header of one request tells which budget the route applied.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register } from '../accounts/helpers.js';
import { buildTestApp, type TestApp } from '../support/app.js';

const LIMITS = { auth: 11, refresh: 12, api: 13, 'ice-servers': 14 } as const;
type Budget = keyof typeof LIMITS;
const PREFIX = '/api/v1/auth';

/** `METHOD /path` (the path under PREFIX, parameters as `{id}`) -> the budget the documentation's table names. */
function documentedBudgets(): Map<string, string> {
  const doc = readFileSync(new URL('../../docs/account-api.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Rate limits\n'));
  const budgets = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const budget = cells[1];
    if (!budget || !(budget in LIMITS)) continue;
    for (const [, method, path] of cells[2]!.matchAll(/\b(GET|POST|PUT|DELETE) (\/[^\s,)]+)/g)) {
      const operation = `${method} ${path!.replace(/:(\w+)/g, '{$1}')}`;
      expect(budgets.has(operation), `${operation} listed twice`).toBe(false);
      budgets.set(operation, budget);
    }
  }
  return budgets;
}

describe('docs/account-api.md, "Rate limits"', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(
      {
        TRUST_PROXY: 'xff',
        RATE_LIMIT_AUTH_PER_MIN: String(LIMITS.auth),
        RATE_LIMIT_REFRESH_PER_MIN: String(LIMITS.refresh),
        RATE_LIMIT_API_PER_MIN: String(LIMITS.api),
        RATE_LIMIT_ICE_SERVERS_PER_MIN: String(LIMITS['ice-servers']),
      },
      { areas: { relay: false } },
    );
  });
  afterAll(() => t.close());

  it('names, for every operation of the account API, the one budget its route counts in', async () => {
    const spec = (await (await t.app.request('/api/v1/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    const applied = new Map<string, string>();
    let client = 1;
    let token: string | undefined;
    for (const [path, operations] of Object.entries(spec.paths)) {
      if (!path.startsWith(`${PREFIX}/`)) continue;
      for (const method of Object.keys(operations)) {
        // No token, an empty body: the limit counts before either is checked, except for a budget
        // counted per account (GET /ice-servers): a 401 without a policy is asked again with a token.
        const ask = (authorization?: string) =>
          t.app.request(path.replace(/\{\w+\}/g, '1'), {
            method: method.toUpperCase(),
            headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${client++}`, ...(authorization ? { authorization } : {}) },
            ...(method === 'get' ? {} : { body: '{}' }),
          });
        let reply = await ask();
        if (reply.status === 401 && !reply.headers.has('ratelimit-policy')) {
          token ??= (await register(t.app)).tokens.token;
          reply = await ask(`Bearer ${token}`);
        }
        const limit = Number(reply.headers.get('ratelimit-policy')?.split(';')[0]);
        const budget = (Object.keys(LIMITS) as Budget[]).find((name) => LIMITS[name] === limit) ?? 'none';
        applied.set(`${method.toUpperCase()} ${path.slice(PREFIX.length)}`, budget);
      }
    }
    expect(applied.size).toBeGreaterThan(20);
    expect(Object.fromEntries([...documentedBudgets()].sort())).toEqual(Object.fromEntries([...applied].sort()));
  });
});
