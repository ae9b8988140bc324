import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { allowSlowTests, relay } from './support.js';

allowSlowTests();

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ MEDIASOUP_WORKERS: '2', MEDIASOUP_MAX_ROUTERS: '50' });
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
      workers: [
        { pid: expect.any(Number), alive: true, restarts: 0, deaths: 0, routers: 1, port: rtcMinPort, lastRestartDelayMs: null },
        { pid: expect.any(Number), alive: true, restarts: 0, deaths: 0, routers: 0, port: rtcMinPort + 1, lastRestartDelayMs: null },
      ],
      counts: { routers: 1, transports: 2, producers: 1, consumers: 0, dataProducers: 0, dataConsumers: 0 },
      limits: { maxRouters: 50, rtcMinPort, rtcMaxPort },
    });
    expect(res.body.uptime_s).toBeGreaterThanOrEqual(0);
  });
});
