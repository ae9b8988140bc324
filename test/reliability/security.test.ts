// The internal token compared in constant time: every wrong token, whatever its length, takes the same
// path (a spy on node:crypto, so this file runs in a process of its own; the app's other HTTP security
// checks are in security-http.test.ts).
import * as crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { APP_TIMEOUT } from '../accounts/helpers.js';
import { buildTestApp, type TestApp } from '../support/app.js';

// A pass-through spy: the guard's comparison is observed, not changed.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const apps: TestApp[] = [];
async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await buildTestApp(env);
  apps.push(t);
  return t;
}
afterAll(async () => {
  for (const t of apps) await t.close();
}, APP_TIMEOUT);

let shared: TestApp;
beforeAll(async () => {
  shared = await app({ RATE_LIMIT_API_PER_MIN: '0' });
}, APP_TIMEOUT);

describe('internal token', () => {
  it('is compared in constant time: every presented token, of any length, is one 32-byte digest comparison', async () => {
    const spy = vi.mocked(crypto.timingSafeEqual);
    const right = shared.internalToken;
    const presented: Record<string, string | undefined> = {
      missing: undefined,
      empty: '',
      short: 'x',
      prefix: right.slice(0, -1),
      sameLengthLastCharWrong: `${right.slice(0, -1)}${right.endsWith('x') ? 'y' : 'x'}`,
      sameLengthFirstCharWrong: `${right.startsWith('x') ? 'y' : 'x'}${right.slice(1)}`,
      longer: `${right}x`,
      huge: 'a'.repeat(8000),
      right,
    };
    const seen: Record<string, { status: number; body: string; comparisons: number[][] }> = {};
    for (const [name, token] of Object.entries(presented)) {
      spy.mockClear();
      const res = await shared.app.request('/internal/info', { headers: token === undefined ? {} : { 'x-internal-token': token } });
      seen[name] = { status: res.status, body: await res.text(), comparisons: spy.mock.calls.map(([a, b]) => [(a as Buffer).length, (b as Buffer).length]) };
    }
    expect(seen.right).toMatchObject({ status: 200, comparisons: [[32, 32]] });
    expect(seen.missing).toMatchObject({ status: 401, comparisons: [] });
    const wrong = Object.entries(seen).filter(([name]) => name !== 'right' && name !== 'missing');
    for (const [name, s] of wrong) {
      expect({ name, status: s.status, comparisons: s.comparisons }).toEqual({ name, status: 401, comparisons: [[32, 32]] });
      expect(s.body).toBe(seen.missing!.body);
    }
  });

  it('takes about as long for a wrong token of the wrong length as for one of the right length', async () => {
    const right = shared.internalToken;
    const samples = { short: [] as number[], sameLength: [] as number[] };
    const tokens = { short: 'x', sameLength: `${right.slice(0, -1)}${right.endsWith('x') ? 'y' : 'x'}` };
    for (let i = 0; i < 1500; i++) {
      // Alternating, so drift in machine load falls on both alike.
      for (const kind of i % 2 ? (['short', 'sameLength'] as const) : (['sameLength', 'short'] as const)) {
        const started = performance.now();
        await (await shared.app.request('/internal/v1/routers/x', { method: 'DELETE', headers: { 'x-internal-token': tokens[kind] } })).arrayBuffer();
        samples[kind].push(performance.now() - started);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ratio = median(samples.short) / median(samples.sameLength);
    console.log(`internal token: median ${median(samples.short).toFixed(4)} ms (1 char) vs ${median(samples.sameLength).toFixed(4)} ms (right length), ratio ${ratio.toFixed(3)}`);
    expect(ratio).toBeGreaterThan(0.67);
    expect(ratio).toBeLessThan(1.5);
  });
});
