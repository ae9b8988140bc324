import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { bodyLimit } from '../../src/http/body-limit.js';

const app = new Hono()
  .use(bodyLimit({ maxSize: 10, onError: (c) => c.text('too large', 413) }))
  .all('/', async (c) => c.text(`ok ${(await c.req.text()).length}`));

function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 4) controller.enqueue(bytes.subarray(i, i + 4));
      controller.close();
    },
  });
}

describe('bodyLimit', () => {
  it('decides from Content-Length', async () => {
    expect((await app.request('/', { method: 'POST', body: '0123456789', headers: { 'content-length': '10' } })).status).toBe(200);
    expect((await app.request('/', { method: 'POST', body: '0123456789a', headers: { 'content-length': '11' } })).status).toBe(413);
  });

  it('measures a chunked body while streaming', async () => {
    const ok = await app.request('/', { method: 'POST', body: chunked('0123456789'), headers: { 'transfer-encoding': 'chunked' }, duplex: 'half' } as RequestInit);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('ok 10');
    const big = await app.request('/', { method: 'POST', body: chunked('x'.repeat(50)), headers: { 'transfer-encoding': 'chunked' }, duplex: 'half' } as RequestInit);
    expect(big.status).toBe(413);
  });

  it('measures a body that declares neither header (an in-process Request)', async () => {
    expect((await app.request('/', { method: 'PUT', body: 'x'.repeat(11) })).status).toBe(413);
    expect((await app.request('/', { method: 'PUT', body: 'x'.repeat(3) })).status).toBe(200);
  });

  it('lets requests without a body through', async () => {
    expect((await app.request('/')).status).toBe(200);
    expect((await app.request('/', { method: 'DELETE' })).status).toBe(200);
  });
});
