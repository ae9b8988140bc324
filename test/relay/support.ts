// Helpers for the relay tests: authenticated requests and valid media parameters (no real RTP needed).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, vi } from 'vitest';
import type { z } from 'zod';
import type { consumerSchema } from '../../src/relay/kinds/consumers/contract.js';
import type { producerSchema } from '../../src/relay/kinds/producers/contract.js';
import type { routerSchema } from '../../src/relay/kinds/routers/contract.js';
import type { transportSchema } from '../../src/relay/kinds/transports/contract.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { late } from '../support/late.js';

/**
 * Real workers on a 2-core machine under a parallel suite can take longer than vitest's 5 s default
 * (the projects in vitest.config.ts do not inherit its root testTimeout/hookTimeout).
 */
export function allowSlowTests(): void {
  vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });
}

/**
 * The test app of a relay test file (built before its tests, closed after) and `relay()` on it.
 * @example const { t, api } = useRelayApp({ MEDIASOUP_WORKERS: '2' })
 */
export function useRelayApp(env: Record<string, string> = {}): { t: TestApp; api: ReturnType<typeof relay> } {
  const app = late<TestApp>('the relay test app');
  beforeAll(async () => {
    app.set(await buildTestApp(env, { areas: { accounts: false } }));
  });
  afterAll(() => app.get()?.close());
  return { t: app.value, api: relay(app.value) };
}

export interface Answer<T = any> {
  status: number;
  body: T;
}

export function relay(t: TestApp) {
  const send = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const headers = { 'X-Internal-Token': t.internalToken, 'Content-Type': 'application/json' };
    const res = await t.app.request(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  return {
    post: (path: string, body?: unknown) => send('POST', path, body),
    del: (path: string) => send('DELETE', path),
    get: (path: string) => send('GET', path),

    async router(body: unknown = {}): Promise<Omit<z.output<typeof routerSchema>, 'rtpCapabilities'> & { rtpCapabilities: any }> {
      const res = await send('POST', '/internal/v1/routers', body);
      if (res.status !== 201) throw new Error(`router: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async transport(routerId: string, direction: 'send' | 'recv', extra: object = {}): Promise<z.output<typeof transportSchema>> {
      const res = await send('POST', '/internal/v1/transports', { routerId, direction, ...extra });
      if (res.status !== 201) throw new Error(`transport: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async producer(transportId: string, kind: 'audio' | 'video' = 'audio', extra: object = {}): Promise<z.output<typeof producerSchema>> {
      const rtpParameters = kind === 'audio' ? opusParameters() : vp8Parameters();
      const res = await send('POST', '/internal/v1/producers', { transportId, kind, rtpParameters, ...extra });
      if (res.status !== 201) throw new Error(`producer: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async consumer(transportId: string, producerId: string, rtpCapabilities: unknown): Promise<z.output<typeof consumerSchema>> {
      const res = await send('POST', '/internal/v1/consumers', { transportId, producerId, rtpCapabilities });
      if (res.status !== 201) throw new Error(`consumer: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
  };
}

let nextSsrc = 1000;

export function opusParameters() {
  return {
    codecs: [{ mimeType: 'audio/opus', payloadType: 100, clockRate: 48000, channels: 2, parameters: { useinbandfec: 1 }, rtcpFeedback: [] }],
    headerExtensions: [],
    encodings: [{ ssrc: nextSsrc++ }],
    rtcp: { cname: 'relay-test' },
  };
}

export function vp8Parameters() {
  return {
    codecs: [{ mimeType: 'video/VP8', payloadType: 101, clockRate: 90000, rtcpFeedback: [{ type: 'nack' }] }],
    headerExtensions: [],
    encodings: [{ ssrc: nextSsrc++ }],
    rtcp: { cname: 'relay-test' },
  };
}

/** What a browser would send: role and one SHA-256 fingerprint (32 bytes). */
export function dtlsParameters(role: 'auto' | 'client' | 'server' = 'client') {
  const value = [...randomBytes(32)].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
  return { role, fingerprints: [{ algorithm: 'sha-256' as const, value }] };
}

/** Polls until `check` returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 10_000, intervalMs = 10): Promise<Exclude<T, undefined | false>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/**
 * How many transports the first worker's WebRtcServer still holds. Reaches into the pool: the
 * server's own map is the only witness of a transport it kept (mediasoup 3.11 forgets one only on
 * that transport's own close).
 */
export function webRtcServerTransportCount(t: TestApp): number {
  const { pool } = t.media as unknown as { pool: { slots: Array<{ webRtcServer: { webRtcTransportsForTesting: Map<string, unknown> } }> } };
  return pool.slots[0]!.webRtcServer.webRtcTransportsForTesting.size;
}
