import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { infoSchema } from '../../src/relay/contract/service.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { allowSlowTests, relay } from './support.js';

allowSlowTests();

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ MEDIASOUP_WORKERS: '2', MEDIASOUP_MAX_ROUTERS: '50' }, { areas: { accounts: false } });
});
afterAll(() => t.close());

describe('GET /internal/info', () => {
  it('describes the workers, the registry and the limits', async () => {
    const api = relay(t);
    const router = await api.router();
    const send = await api.transport(router.id, 'send');
    await api.transport(router.id, 'recv');
    await api.producer(send.id, 'audio');

    const res = await api.get('/internal/info');
    expect(res.status).toBe(200);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const { rtcMinPort, rtcMaxPort } = t.config.media;
    expect(res.body).toEqual({
      version,
      started_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      uptime_s: expect.any(Number),
      draining: false,
      workers: [
        {
          pid: expect.any(Number), alive: true, restarts: 0, deaths: 0, routers: 1, port: rtcMinPort, lastRestartDelayMs: null,
          counts: { routers: 1, transports: 2, producers: 1, consumers: 0, dataProducers: 0, dataConsumers: 0, pipeTransports: 0, plainTransports: 0, whipEndpoints: 0, whepEndpoints: 0 },
          cpuMs: expect.any(Number),
        },
        {
          pid: expect.any(Number), alive: true, restarts: 0, deaths: 0, routers: 0, port: rtcMinPort + 1, lastRestartDelayMs: null,
          counts: { routers: 0, transports: 0, producers: 0, consumers: 0, dataProducers: 0, dataConsumers: 0, pipeTransports: 0, plainTransports: 0, whipEndpoints: 0, whepEndpoints: 0 },
          cpuMs: expect.any(Number),
        },
      ],
      counts: { routers: 1, transports: 2, producers: 1, consumers: 0, dataProducers: 0, dataConsumers: 0, pipeTransports: 0, plainTransports: 0, whipEndpoints: 0, whepEndpoints: 0 },
      limits: { maxRouters: 50, maxTransportsPerRouter: 500, maxProducersPerRouter: 1000, maxConsumersPerRouter: 20000, rtcMinPort, rtcMaxPort },
      largestRouter: { transports: 2, producers: 1, consumers: 0 },
      rate_limits: { store: 'memory' },
      // Nothing has closed or changed state yet: no event, and the stream's resume point is this bus's start.
      events: { lastId: t.events.bus.stats().lastId, buffered: 0, streams: 0, webhook: { enabled: false } },
      // No CLUSTER_NODE_URL: a single relay.
      cluster: { enabled: false, nodeId: null, degraded: false, nodes: 0 },
    });
    expect(res.body.uptime_s).toBeGreaterThanOrEqual(0);
  });

  it('answers exactly what its OpenAPI schema says (a strict zod schema, the document generated from it)', async () => {
    const res = await relay(t).get('/internal/info');
    // Strict: a field the endpoint returns but the schema omits fails here.
    const parsed = infoSchema.safeParse(res.body);
    expect(parsed.error?.issues ?? []).toEqual([]);
    const served = await t.app.request('/internal/v1/openapi.json', { headers: { 'X-Internal-Token': t.internalToken } });
    const doc = (await served.json()) as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: { properties: Record<string, any> } }> }> } }>;
    };
    const schema = doc.paths['/internal/info']!.get.responses['200']!.content['application/json']!.schema;
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(res.body).sort());
    expect(Object.keys(schema.properties.workers.items.properties).sort()).toEqual(Object.keys(res.body.workers[0]).sort());
    expect(Object.keys(schema.properties.workers.items.properties)).toEqual(expect.arrayContaining(['deaths', 'lastRestartDelayMs']));
  });
});
