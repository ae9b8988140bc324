import { describe, expect, it } from 'vitest';
import { buildTestApp } from '../support/app.js';
import { allowSlowTests, relay, UNKNOWN_ID, useRelayApp, webRtcServerTransportCount } from './support.js';

allowSlowTests();

const { t, api } = useRelayApp();

describe('POST /internal/v1/routers', () => {
  it('creates a router with the default codecs', async () => {
    const res = await api.post('/internal/v1/routers', {});
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const mimeTypes = res.body.rtpCapabilities.codecs.map((c: { mimeType: string }) => c.mimeType);
    expect(mimeTypes).toEqual(expect.arrayContaining(['audio/opus', 'video/VP8', 'video/VP9', 'video/H264']));
    const h264 = res.body.rtpCapabilities.codecs.find((c: { mimeType: string }) => c.mimeType === 'video/H264');
    expect(h264.parameters).toMatchObject({ 'packetization-mode': 1, 'profile-level-id': '42e01f', 'level-asymmetry-allowed': 1 });
    const opus = res.body.rtpCapabilities.codecs.find((c: { mimeType: string }) => c.mimeType === 'audio/opus');
    expect(opus).toMatchObject({ clockRate: 48000, channels: 2 });
  });

  it('accepts a request without a body', async () => {
    const res = await t.app.request('/internal/v1/routers', { method: 'POST', headers: { 'X-Internal-Token': t.internalToken } });
    expect(res.status).toBe(201);
  });

  it('creates a router with the given codecs and appData', async () => {
    const res = await api.post('/internal/v1/routers', {
      mediaCodecs: [{ kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2 }],
      appData: { room: 'r1' },
    });
    expect(res.status).toBe(201);
    expect(res.body.rtpCapabilities.codecs.map((c: { mimeType: string }) => c.mimeType)).toEqual(['audio/opus']);
  });

  it('refuses a body that fails the schema', async () => {
    const res = await api.post('/internal/v1/routers', { mediaCodecs: [{ mimeType: 'audio/opus' }] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: { issues: expect.arrayContaining([{ path: 'mediaCodecs.0.clockRate', message: expect.any(String) }]) },
    });
  });

  it('answers VALIDATION_ERROR when the engine refuses a codec (UnsupportedError)', async () => {
    const res = await api.post('/internal/v1/routers', { mediaCodecs: [{ mimeType: 'audio/no-such-codec', clockRate: 8000 }] });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details.issues).toHaveLength(1);
  });

  it('refuses malformed JSON and non-JSON bodies', async () => {
    const headers = { 'X-Internal-Token': t.internalToken };
    const malformed = await t.app.request('/internal/v1/routers', { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: '{"mediaCodecs": [' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: { issues: [expect.any(Object)] } });
    const text = await t.app.request('/internal/v1/routers', { method: 'POST', headers: { ...headers, 'Content-Type': 'text/plain' }, body: '{}' });
    expect(text.status).toBe(400);
    expect(await text.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    const untyped = await t.app.request('/internal/v1/routers', { method: 'POST', headers, body: '{}' });
    expect(untyped.status).toBe(400);
    const array = await api.post('/internal/v1/routers', []);
    expect(array.status).toBe(400);
    expect(array.body.code).toBe('VALIDATION_ERROR');
  });

  it('takes JSON under the media types the route declares, and answers any other in its own shape', async () => {
    const headers = { 'X-Internal-Token': t.internalToken };
    for (const type of ['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.api+json']) {
      const res = await t.app.request('/internal/v1/routers', { method: 'POST', headers: { ...headers, 'Content-Type': type }, body: '{}' });
      expect(res.status, type).toBe(201);
    }
    // A JSON media type with a malformed parameter list: what @hono/zod-openapi's media-type gate
    // refuses (with a 415 that is no answer of the relay) is refused first, as any body that is not JSON.
    for (const type of ['application/json;', 'application/json ; charset=utf-8']) {
      const res = await t.app.request('/internal/v1/routers', { method: 'POST', headers: { ...headers, 'Content-Type': type }, body: '{}' });
      expect(res.status, type).toBe(400);
      expect(await res.json()).toEqual({ code: 'VALIDATION_ERROR', message: 'request body must be JSON', details: { issues: [{ path: '', message: 'Content-Type must be application/json' }] } });
    }
  });

  it('refuses a body over 256 KiB', async () => {
    const res = await api.post('/internal/v1/routers', { appData: { blob: 'x'.repeat(300 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('DELETE /internal/v1/routers/:id', () => {
  it('closes the router: 204, then 404', async () => {
    const { id } = await api.router();
    expect((await api.del(`/internal/v1/routers/${id}`)).status).toBe(204);
    const again = await api.del(`/internal/v1/routers/${id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ code: 'NOT_FOUND', message: `router not found: ${id}`, details: { resource: 'router', id } });
  });

  it("leaves nothing in the worker's WebRtcServer (mediasoup 3.11 forgets a transport only on its own close)", async () => {
    const before = webRtcServerTransportCount(t);
    const { id } = await api.router();
    for (const direction of ['send', 'recv', 'send']) expect((await api.post('/internal/v1/transports', { routerId: id, direction })).status).toBe(201);
    expect(webRtcServerTransportCount(t)).toBe(before + 3);
    expect((await api.del(`/internal/v1/routers/${id}`)).status).toBe(204);
    expect(webRtcServerTransportCount(t)).toBe(before);
  });

  it('answers 404 for an unknown or non-UUID id', async () => {
    expect((await api.del(`/internal/v1/routers/${UNKNOWN_ID}`)).body.code).toBe('NOT_FOUND');
    const odd = await api.del('/internal/v1/routers/not-a-uuid');
    expect(odd.status).toBe(404);
    expect(odd.body.details).toEqual({ resource: 'router', id: 'not-a-uuid' });
  });
});

describe('router limit', () => {
  it('answers ROUTER_LIMIT_EXCEEDED once MEDIASOUP_MAX_ROUTERS routers are open, and frees a place on close', async () => {
    const small = await buildTestApp({ MEDIASOUP_MAX_ROUTERS: '2' }, { areas: { accounts: false } });
    try {
      const s = relay(small);
      const first = await s.router();
      await s.router();
      const refused = await s.post('/internal/v1/routers', {});
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('ROUTER_LIMIT_EXCEEDED');
      // Concurrent creations cannot overshoot the limit either.
      await s.del(`/internal/v1/routers/${first.id}`);
      const burst = await Promise.all([1, 2, 3].map(() => s.post('/internal/v1/routers', {})));
      expect(burst.map((r) => r.status).sort()).toEqual([201, 503, 503]);
    } finally {
      await small.close();
    }
  });
});
