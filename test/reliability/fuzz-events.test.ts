// Property-based fuzzing of the event stream (GET /internal/v1/events behind the real token guard):
// hostile routerId filters (counts, lengths, any characters), Last-Event-ID headers and tokens. Every
// answer is a stream that starts with a cursor, a replay or a resync, or the relay's error object;
// never a 5xx, and no subscription is left behind.
import fc from 'fast-check';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { afterAll, describe, expect, it } from 'vitest';
import { internalToken } from '../../src/http/internal-token.js';
import { createEventBus } from '../../src/events/bus.js';
import { createEventStreams } from '../../src/events/sse.js';
import { answerOf, expectRelayAnswer, FuzzStats, fuzzParameters, headerValueOf } from './support/fuzz.js';

const TOKEN = 'fuzz-events-token-0123456789abcdef0123';
const stats = new FuzzStats('/internal/v1/events');
const bus = createEventBus({ bufferSize: 100 });
const streams = createEventStreams(bus, { maxStreams: 3, heartbeatMs: 100 }); // an up-to-date resume writes nothing else at first
const app = new Hono();
app.use('/internal/*', internalToken({ token: TOKEN }));
app.route('/internal/v1', streams.routes);
app.onError((error, c) => {
  if (error instanceof HTTPException && error.status === 401) return c.json({ code: 'UNAUTHORIZED', message: 'missing or invalid internal token' }, 401);
  return c.json({ code: 'INTERNAL_ERROR', message: 'internal error' }, 500);
});
const published = Array.from({ length: 150 }, (_, i) => bus.publish({ type: 'router.silence', routerId: `r${i % 7}` }));

const routerIdValue = fc.oneof(
  { arbitrary: fc.constantFrom('r1', 'r2', published[0]!.id), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 100, maxLength: 3000 }), weight: 1 },
  { arbitrary: fc.constantFrom('', '%', '%zz', '&', '=', '\u0000', '\ud800', '..', '__proto__'), weight: 2 },
);
/** Percent-encodes anything, a lone surrogate as the invalid UTF-8 it would be (encodeURIComponent throws). */
const encode = (text: string) =>
  Array.from(text, (ch) => {
    try {
      return encodeURIComponent(ch);
    } catch {
      return '%ED%A0%80';
    }
  }).join('');
const query = fc.oneof(
  fc.array(routerIdValue, { maxLength: 8 }).map((ids) => ids.map((id) => `routerId=${encode(id)}`).join('&')),
  fc.integer({ min: 95, max: 160 }).map((n) => Array.from({ length: n }, (_, i) => `routerId=r${i}`).join('&')),
  fc.string({ unit: 'binary-ascii', maxLength: 200 }).map((raw) => raw.replace(/[#\s]/g, '')),
  fc.constantFrom('routerId', 'routerId[]=a', 'routerid=a', 'lastEventId=1', ''),
);
const lastEventId = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(...published.slice(-60).map((e) => e.id), published[0]!.id, '0', '9999999999999999'),
  headerValueOf(200),
  headerValueOf(8000),
);
const token = fc.oneof({ arbitrary: fc.constant(TOKEN), weight: 8 }, { arbitrary: fc.constantFrom(undefined, '', 'x', TOKEN.slice(1)), weight: 1 });

afterAll(() => {
  console.log(stats.summary());
});

describe('fuzz GET /internal/v1/events', () => {
  it('answers a stream or the relay error object, never a 5xx, and leaves no subscription open', async () => {
    await fc.assert(
      fc.asyncProperty(query, lastEventId, token, async (q, last, tok) => {
        const headers: Record<string, string> = {};
        if (tok !== undefined) headers['X-Internal-Token'] = tok;
        if (last !== undefined) headers['Last-Event-ID'] = last;
        const res = await app.request(`/internal/v1/events${q ? `?${q}` : ''}`, { headers });
        stats.record(res.status);
        const what = `GET ?${q.slice(0, 80)} Last-Event-ID ${String(last).slice(0, 40)}`;
        if (res.status !== 200) {
          expectRelayAnswer(await answerOf(res), 200, ['VALIDATION_ERROR', 'STREAM_LIMIT_EXCEEDED'], what);
          return;
        }
        expect(res.headers.get('content-type'), what).toContain('text/event-stream');
        const reader = res.body!.getReader();
        const { value } = await reader.read();
        const first = new TextDecoder().decode(value);
        expect(first, what).toMatch(/^(: cursor |id: |: heartbeat)/);
        if (first.startsWith('id: ')) {
          const data = /\ndata: (.*)\n/.exec(first)?.[1];
          const event = JSON.parse(data!) as { type: string; id: string };
          // Ids are decimal integers of any length: compared as numbers, not as strings.
          const after = last !== undefined && /^(0|[1-9][0-9]*)$/.test(last) && BigInt(event.id) > BigInt(last);
          expect(after || event.type === 'resync', what).toBe(true);
        }
        await reader.cancel();
      }),
      fuzzParameters(),
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(streams.open()).toBe(0);
    expect(bus.stats().subscribers).toBe(0);
    expect(stats.serverErrors).toBe(0);
  });
});
