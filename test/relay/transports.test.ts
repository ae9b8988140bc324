import * as mediasoup from 'mediasoup';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { allowSlowTests, dtlsParameters, UNKNOWN_ID, useRelayApp, waitFor, webRtcServerTransportCount } from './support.js';

allowSlowTests();

// Every transport the engine creates in this process, reached through mediasoup's public observer
// (used to inject one failure into a real transport's connect()).
const engineTransports = new Map<string, mediasoup.types.Transport>();
const engineRouters = new Map<string, mediasoup.types.Router>();
mediasoup.observer.on('newworker', (worker) =>
  worker.observer.on('newrouter', (router) => {
    engineRouters.set(router.id, router);
    router.observer.on('newtransport', (transport) => engineTransports.set(transport.id, transport));
  }),
);

const { t, api } = useRelayApp();
let routerId: string;
beforeAll(async () => {
  routerId = (await api.router()).id;
});

describe('POST /internal/v1/transports', () => {
  it('creates a send transport on the worker WebRtcServer (UDP preferred, TCP too)', async () => {
    const res = await api.post('/internal/v1/transports', { routerId, direction: 'send', appData: { peer: 'p1' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      routerId,
      direction: 'send',
      iceParameters: expect.objectContaining({ usernameFragment: expect.any(String), password: expect.any(String) }),
      iceCandidates: expect.any(Array),
      dtlsParameters: expect.objectContaining({ fingerprints: expect.any(Array) }),
    });
    const candidates = res.body.iceCandidates as { protocol: string; port: number; ip: string; priority: number }[];
    expect(candidates.map((c) => c.protocol).sort()).toEqual(['tcp', 'udp']);
    for (const c of candidates) {
      expect(c.port).toBe(t.config.media.rtcMinPort);
      expect(c.ip).toBe('127.0.0.1');
    }
    const udp = candidates.find((c) => c.protocol === 'udp')!;
    const tcp = candidates.find((c) => c.protocol === 'tcp')!;
    expect(udp.priority).toBeGreaterThan(tcp.priority);
  });

  it('shares the one port among many transports', async () => {
    const ports = new Set<number>();
    for (let i = 0; i < 5; i++) {
      const transport = await api.transport(routerId, 'recv');
      for (const c of transport.iceCandidates) ports.add(c.port);
    }
    expect([...ports]).toEqual([t.config.media.rtcMinPort]);
  });

  it('adds sctpParameters when enableSctp is set', async () => {
    const plain = await api.transport(routerId, 'recv');
    expect(plain).not.toHaveProperty('sctpParameters');
    const withSctp = await api.transport(routerId, 'recv', { enableSctp: true });
    expect(withSctp.sctpParameters).toMatchObject({ OS: 1024, MIS: 1024 });
  });

  it('closes a transport the engine made for a router that closed meanwhile (no half-created resource)', async () => {
    const doomed = await api.router();
    const engineRouter = engineRouters.get(doomed.id)!;
    const created: mediasoup.types.WebRtcTransport[] = [];
    const realCreate = engineRouter.createWebRtcTransport.bind(engineRouter);
    // The real call, answered only after the DELETE below has gone through.
    const spy = vi.spyOn(engineRouter, 'createWebRtcTransport').mockImplementation(async (options) => {
      const transport = await realCreate(options);
      created.push(transport);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return transport;
    });
    const transportsBefore = (await api.get('/internal/info')).body.counts.transports;
    const pending = api.post('/internal/v1/transports', { routerId: doomed.id, direction: 'send' });
    await waitFor('the engine call', () => created.length === 1);
    expect((await api.del(`/internal/v1/routers/${doomed.id}`)).status).toBe(204);
    const res = await pending;
    expect(res.status).toBe(404);
    expect(res.body.details).toEqual({ resource: 'router', id: doomed.id });
    expect(created[0]!.closed).toBe(true);
    expect((await api.get('/internal/info')).body.counts.transports).toBe(transportsBefore);
    spy.mockRestore();
  });

  it('answers NOT_FOUND for an unknown router', async () => {
    const res = await api.post('/internal/v1/transports', { routerId: UNKNOWN_ID, direction: 'send' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'NOT_FOUND', message: `router not found: ${UNKNOWN_ID}`, details: { resource: 'router', id: UNKNOWN_ID } });
  });

  it('validates the body', async () => {
    const res = await api.post('/internal/v1/transports', { routerId, direction: 'sideways', enableSctp: 'yes' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    const paths = res.body.details.issues.map((i: { path: string }) => i.path).sort();
    expect(paths).toEqual(['direction', 'enableSctp']);
    const missing = await api.post('/internal/v1/transports', {});
    expect(missing.body.details.issues.map((i: { path: string }) => i.path).sort()).toEqual(['direction', 'routerId']);
  });
});

describe('DELETE /internal/v1/transports/:id', () => {
  it('closes the transport: 204, then 404, and its router keeps serving', async () => {
    const transport = await api.transport(routerId, 'send');
    expect((await api.del(`/internal/v1/transports/${transport.id}`)).status).toBe(204);
    expect(engineTransports.get(transport.id)!.closed).toBe(true);
    const again = await api.del(`/internal/v1/transports/${transport.id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ code: 'NOT_FOUND', message: `transport not found: ${transport.id}`, details: { resource: 'transport', id: transport.id } });
    expect((await api.post(`/internal/v1/transports/${transport.id}/connect`, { dtlsParameters: dtlsParameters() })).status).toBe(404);
    expect((await api.transport(routerId, 'send')).routerId).toBe(routerId);
  });

  it("leaves nothing in the worker's WebRtcServer", async () => {
    const before = webRtcServerTransportCount(t);
    const transport = await api.transport(routerId, 'recv');
    expect(webRtcServerTransportCount(t)).toBe(before + 1);
    expect((await api.del(`/internal/v1/transports/${transport.id}`)).status).toBe(204);
    expect(webRtcServerTransportCount(t)).toBe(before);
  });

  it('answers NOT_FOUND for an unknown or malformed id', async () => {
    for (const id of [UNKNOWN_ID, 'not-a-uuid']) {
      const res = await api.del(`/internal/v1/transports/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'NOT_FOUND', message: `transport not found: ${id}`, details: { resource: 'transport', id } });
    }
  });
});

describe('POST /internal/v1/transports/:id/connect', () => {
  it('connects once; a second connect answers CONFLICT', async () => {
    const transport = await api.transport(routerId, 'send');
    const first = await api.post(`/internal/v1/transports/${transport.id}/connect`, { dtlsParameters: dtlsParameters() });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ id: transport.id, connected: true });
    const second = await api.post(`/internal/v1/transports/${transport.id}/connect`, { dtlsParameters: dtlsParameters() });
    expect(second.status).toBe(409);
    expect(second.body).toEqual({ code: 'CONFLICT', message: expect.any(String), details: { transportId: transport.id, direction: 'send' } });
  });

  it('lets exactly one of several concurrent connects through', async () => {
    const transport = await api.transport(routerId, 'recv');
    // The real connect(), slowed down so that the others arrive while the first is in the engine.
    const engineTransport = engineTransports.get(transport.id)!;
    const realConnect = engineTransport.connect.bind(engineTransport);
    const spy = vi.spyOn(engineTransport, 'connect').mockImplementation(async (params) => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return realConnect(params);
    });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => api.post(`/internal/v1/transports/${transport.id}/connect`, { dtlsParameters: dtlsParameters('auto') })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409]);
    expect(spy).toHaveBeenCalledTimes(1);
    spy.mockRestore();
  });

  it('accepts every role and each fingerprint algorithm mediasoup knows', async () => {
    const algorithms = { 'sha-1': 20, 'sha-224': 28, 'sha-256': 32, 'sha-384': 48, 'sha-512': 64 };
    for (const [algorithm, bytes] of Object.entries(algorithms)) {
      const transport = await api.transport(routerId, 'send');
      const value = Array.from({ length: bytes }, (_, i) => (i % 256).toString(16).padStart(2, '0')).join(':');
      const res = await api.post(`/internal/v1/transports/${transport.id}/connect`, { dtlsParameters: { role: 'server', fingerprints: [{ algorithm, value }] } });
      expect(res.status, algorithm).toBe(200);
    }
    const noRole = await api.transport(routerId, 'send');
    const { fingerprints } = dtlsParameters();
    expect((await api.post(`/internal/v1/transports/${noRole.id}/connect`, { dtlsParameters: { fingerprints } })).status).toBe(200);
  });

  it('refuses malformed dtlsParameters before they reach the worker, and the transport stays connectable', async () => {
    const transport = await api.transport(routerId, 'send');
    const good = dtlsParameters().fingerprints[0]!;
    const bad = [
      {},
      { dtlsParameters: {} },
      { dtlsParameters: { fingerprints: [] } },
      { dtlsParameters: { role: 'boss', fingerprints: [good] } },
      { dtlsParameters: { fingerprints: [{ algorithm: 'md5', value: good.value }] } },
      { dtlsParameters: { fingerprints: [{ algorithm: 'sha-256', value: 'not hex' }] } },
      { dtlsParameters: { fingerprints: [{ algorithm: 'sha-256', value: 'AB:CD' }] } },
      { dtlsParameters: { fingerprints: [{ algorithm: 'sha-256' }] } },
      { dtlsParameters: { fingerprints: [good, 'junk'] } },
      { dtlsParameters: { fingerprints: 'AB:CD' } },
      { dtlsParameters: 42 },
    ];
    for (const body of bad) {
      const res = await api.post(`/internal/v1/transports/${transport.id}/connect`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.details.issues.length).toBeGreaterThan(0);
    }
    const res = await api.post(`/internal/v1/transports/${transport.id}/connect`, { dtlsParameters: dtlsParameters() });
    expect(res.status).toBe(200);
  });

  it('reverts the marker when the engine fails, so the connect can be retried', async () => {
    const transport = await api.transport(routerId, 'send');
    const engineTransport = engineTransports.get(transport.id);
    expect(engineTransport).toBeDefined();
    const spy = vi.spyOn(engineTransport!, 'connect').mockRejectedValueOnce(new Error('injected engine failure'));
    const failed = await api.post(`/internal/v1/transports/${transport.id}/connect`, { dtlsParameters: dtlsParameters() });
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual({ code: 'MEDIASOUP_ERROR', message: 'media engine failed: connect transport' });
    const retried = await api.post(`/internal/v1/transports/${transport.id}/connect`, { dtlsParameters: dtlsParameters() });
    expect(retried.status).toBe(200);
    expect(spy).toHaveBeenCalledTimes(2);
    spy.mockRestore();
    const third = await api.post(`/internal/v1/transports/${transport.id}/connect`, { dtlsParameters: dtlsParameters() });
    expect(third.status).toBe(409);
  });

  it('answers NOT_FOUND for an unknown or malformed transport id without touching the engine', async () => {
    for (const id of [UNKNOWN_ID, 'not-a-uuid']) {
      const res = await api.post(`/internal/v1/transports/${id}/connect`, { dtlsParameters: dtlsParameters() });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'NOT_FOUND', message: `transport not found: ${id}`, details: { resource: 'transport', id } });
    }
  });
});
