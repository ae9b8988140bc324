// The pool of node-to-node connections gives up an idle connection before the other node closes it: a
// call is never sent on a connection the other side is closing at that moment (ECONNRESET, answered
// 503 NODE_UNREACHABLE though the node is up). A real node:http server with a 2-s keep-alive.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callNode } from '../../src/relay/cluster/node-client.js';

describe('node-to-node connections', () => {
  let server: http.Server;
  let base: string;
  const connections: number[] = [];

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    // Node announces it to the client as `Keep-Alive: timeout=2`.
    server.keepAliveTimeout = 2_000;
    server.on('connection', () => connections.push(Date.now()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("keeps a connection for the next call, and drops it a second before the other node's announced keep-alive ends", async () => {
    const first = await callNode(base, 'GET', '/a', {}, undefined, 1_000);
    expect(first.status).toBe(200);
    expect(first.headers['keep-alive']).toBe('timeout=2');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await callNode(base, 'GET', '/b', {}, undefined, 1_000)).status).toBe(200);
    expect(connections).toHaveLength(1);
    // 1.4 s idle: past the 1 s the pool keeps it, before the 2 s the server does. Kept until the
    // server closes it, the connection would be reused here.
    await new Promise((resolve) => setTimeout(resolve, 1_400));
    expect((await callNode(base, 'GET', '/c', {}, undefined, 1_000)).status).toBe(200);
    expect(connections).toHaveLength(2);
  });
});
