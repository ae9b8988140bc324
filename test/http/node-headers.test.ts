// The relay's gate (token, body size), the request id and the JSON check read their headers from
// Node's parsed request when @hono/node-server serves it (src/http/node-request.ts): the same answers
// as through app.request, checked here over a real socket with raw header lines.
import { serve, type ServerType } from '@hono/node-server';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let server: ServerType;
let port: number;
beforeAll(async () => {
  t = await buildTestApp();
  await new Promise<void>((resolve) => {
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** One request with its header lines exactly as given (repeated names stay repeated; Host added), body in `chunks`. */
function send(method: string, path: string, rawHeaders: [string, string][], chunks: string[] = []): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: [['Host', `127.0.0.1:${port}`], ...rawHeaders].flat() as unknown as http.OutgoingHttpHeaders, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

const token = (): [string, string] => ['X-Internal-Token', t.internalToken];
const json: [string, string] = ['Content-Type', 'application/json'];

describe('headers read from Node’s request', () => {
  it('takes the token in any letter case and refuses it missing, wrong or sent twice', async () => {
    expect((await send('POST', '/internal/v1/routers', [['x-INTERNAL-token', t.internalToken]])).status).toBe(201);
    for (const headers of [[], [['X-Internal-Token', `${t.internalToken}x`]], [token(), token()]] as [string, string][][]) {
      const res = await send('POST', '/internal/v1/routers', headers);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('UNAUTHORIZED');
    }
  });

  it('echoes a sane X-Request-Id and replaces a missing or unsafe one', async () => {
    expect((await send('GET', '/healthz', [['X-Request-Id', 'abc-123']])).headers['x-request-id']).toBe('abc-123');
    for (const headers of [[], [['X-Request-Id', 'a b']]] as [string, string][][]) {
      expect((await send('GET', '/healthz', headers)).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('refuses a body over 256 KiB by its Content-Length, and a chunked one as it streams; takes a small chunked one', async () => {
    const big = JSON.stringify({ appData: { filler: 'x'.repeat(300 * 1024) } });
    const declared = await send('POST', '/internal/v1/routers', [token(), json, ['Content-Length', String(Buffer.byteLength(big))]], [big]);
    expect(declared.status).toBe(413);
    expect(declared.body.code).toBe('VALIDATION_ERROR');
    const chunked = await send('POST', '/internal/v1/routers', [token(), json, ['Transfer-Encoding', 'chunked']], [big.slice(0, 100_000), big.slice(100_000)]);
    expect(chunked.status).toBe(413);
    const small = await send('POST', '/internal/v1/routers', [token(), json, ['Transfer-Encoding', 'chunked']], ['{"appData":', '{"room":"r1"}}']);
    expect(small.status).toBe(201);
  });

  it('reads the Content-Type with parameters, refuses a body of another type, and takes no body at all', async () => {
    const body = JSON.stringify({ appData: { room: 'r2' } });
    expect((await send('POST', '/internal/v1/routers', [token(), ['Content-Type', 'application/json; charset=utf-8']], [body])).status).toBe(201);
    const plain = await send('POST', '/internal/v1/routers', [token(), ['Content-Type', 'text/plain']], [body]);
    expect(plain.status).toBe(400);
    expect(plain.body.code).toBe('VALIDATION_ERROR');
    expect((await send('POST', '/internal/v1/routers', [token()])).status).toBe(201);
  });
});
