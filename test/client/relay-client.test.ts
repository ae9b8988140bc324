import * as viaPackageExport from 'chat-backend/relay-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayClient, RelayClientError, type RelayClient } from '../../src/client/relay-client.js';
import { buildTestApp, TEST_INTERNAL_TOKEN, type TestApp } from '../support/app.js';

describe('relay client', () => {
  let t: TestApp;
  let relay: RelayClient;

  beforeAll(async () => {
    t = await buildTestApp({}, { areas: { accounts: false } });
    relay = createRelayClient({ baseUrl: 'http://relay.test', token: TEST_INTERNAL_TOKEN, fetch: t.app.request });
  });
  afterAll(() => t.close());

  it('is what the package subpath `chat-backend/relay-client` exports', () => {
    expect(viaPackageExport.createRelayClient).toBe(createRelayClient);
    expect(viaPackageExport.RelayClientError).toBe(RelayClientError);
  });

  it('returns typed results and sends the token', async () => {
    const router = await relay.createRouter();
    expect(router.id).toEqual(expect.any(String));
    expect(router.rtpCapabilities.codecs?.map((c) => c.mimeType)).toContain('audio/opus');

    const transport = await relay.createTransport({ routerId: router.id, direction: 'recv' });
    expect(transport).toMatchObject({ routerId: router.id, direction: 'recv' });
    expect(transport.iceCandidates.length).toBeGreaterThan(0);

    const info = await relay.info();
    expect(info.counts).toMatchObject({ routers: 1, transports: 1 });

    await expect(relay.closeTransport(transport.id)).resolves.toBeUndefined();
    expect((await relay.info()).counts).toMatchObject({ routers: 1, transports: 0 });
    await expect(relay.closeTransport(transport.id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND', details: { resource: 'transport', id: transport.id } });

    await expect(relay.closeRouter(router.id)).resolves.toBeUndefined();
  });

  it('turns an error body into a RelayClientError with status, code, message and details', async () => {
    const error = await relay.resumeConsumer('no-such-consumer').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RelayClientError);
    expect(error).toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
      details: { resource: 'consumer', id: 'no-such-consumer' },
    });
    expect((error as RelayClientError).message).toContain('no-such-consumer');
  });

  it('reports validation failures with their issues', async () => {
    const error = await relay.createTransport({ routerId: 'r', direction: 'sideways' as 'send' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', details: { issues: [expect.objectContaining({ path: 'direction' })] } });
  });

  it('surfaces a wrong token as UNAUTHORIZED', async () => {
    const intruder = createRelayClient({ baseUrl: 'http://relay.test/', token: 'wrong', fetch: t.app.request });
    await expect(intruder.createRouter()).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('keeps an answer that is not an error object readable', async () => {
    const odd = createRelayClient({
      baseUrl: 'http://relay.test',
      token: TEST_INTERNAL_TOKEN,
      fetch: () => Promise.resolve(new Response('<html>bad gateway</html>', { status: 502 })),
    });
    await expect(odd.createRouter()).rejects.toMatchObject({ status: 502, code: 'INTERNAL_ERROR', details: { body: '<html>bad gateway</html>' } });
  });
});
