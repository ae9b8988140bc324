import { hc } from 'hono/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelayApi } from '../../src/relay/contract/api.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { allowSlowTests, dtlsParameters } from './support.js';

allowSlowTests();

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { accounts: false } });
});
afterAll(() => t.close());

describe('hc<RelayApi>', () => {
  it('carries the route types (the typed relay client builds on this)', async () => {
    const client = hc<RelayApi>('http://relay.test/internal', {
      fetch: (input: string | URL | Request, init?: RequestInit) => t.app.request(input, init),
      headers: { 'X-Internal-Token': t.internalToken },
    });
    const routerRes = await client.v1.routers.$post({ json: {} });
    expect(routerRes.status).toBe(201);
    const router = await routerRes.json();
    const transportRes = await client.v1.transports.$post({ json: { routerId: router.id, direction: 'send' } });
    const transport = await transportRes.json();
    const connected = await client.v1.transports[':id'].connect.$post({ param: { id: transport.id }, json: { dtlsParameters: dtlsParameters() } });
    expect(await connected.json()).toEqual({ id: transport.id, connected: true });
    const closed = await client.v1.routers[':id'].$delete({ param: { id: router.id } });
    expect(closed.status).toBe(204);
    const info = await (await client.info.$get()).json();
    expect(info.counts.routers).toBe(0);
  });
});
