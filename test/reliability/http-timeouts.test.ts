// Slow clients against a real server process (issue 11, finding 7): headers sent a byte at a time and
// bodies trickled in are dropped within the configured timeouts, while /healthz keeps answering.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ServerProcess } from '../support/server-process.js';

const HEADERS_TIMEOUT_MS = 1500;
const REQUEST_TIMEOUT_MS = 3000;
const CHECK_MS = 250;

/** Opens a socket, writes `chunks` one per `everyMs` until the server closes it; resolves with when and what it answered. */
function trickle(port: number, first: string, next: () => string, everyMs: number, limitMs: number) {
  return new Promise<{ closedAfterMs: number; answer: string }>((resolve, reject) => {
    const started = performance.now();
    let answer = '';
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(first));
    const timer = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(next());
    }, everyMs);
    const guard = setTimeout(() => {
      clearInterval(timer);
      socket.destroy();
      reject(new Error(`still open after ${limitMs} ms`));
    }, limitMs);
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(guard);
      resolve({ closedAfterMs: performance.now() - started, answer });
    });
  });
}

describe('HTTP timeouts of a real server', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer({
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_CONNECTIONS_CHECK_MS: String(CHECK_MS),
    });
  }, 60_000);
  afterAll(() => server?.stop(), 30_000);

  it('drops a client that sends its headers a byte every 200 ms, within headersTimeout (+ one check)', async () => {
    let i = 0;
    const health = startHealthPolling(server);
    const result = await trickle(server.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', () => `X-Slow-${i++}: a\r\n`, 200, 20_000);
    const healthMs = await health.stop();
    console.log(`slow headers dropped after ${Math.round(result.closedAfterMs)} ms (${result.answer.split('\r\n')[0] || 'no answer'}); /healthz max ${Math.round(healthMs)} ms meanwhile`);
    expect(result.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(result.closedAfterMs).toBeLessThan(HEADERS_TIMEOUT_MS + CHECK_MS + 1500);
    expect(result.answer).toMatch(/^(HTTP\/1\.1 408|$)/);
    expect(healthMs).toBeLessThan(1000);
  }, 30_000);

  it('drops a client that trickles a declared body a byte every 200 ms, within requestTimeout (+ one check)', async () => {
    const head = 'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"account":"';
    const result = await trickle(server.port, head, () => 'a', 200, 20_000);
    console.log(`slow body dropped after ${Math.round(result.closedAfterMs)} ms (${result.answer.split('\r\n')[0] || 'no answer'})`);
    expect(result.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(result.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS + CHECK_MS + 1500);
  }, 30_000);

  it('keeps an idle keep-alive connection for the keep-alive timeout, then closes it', async () => {
    const result = await trickle(server.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', () => '', 1000, 20_000);
    console.log(`idle keep-alive closed after ${Math.round(result.closedAfterMs)} ms`);
    expect(result.answer).toMatch(/^HTTP\/1\.1 200/);
    // HTTP_KEEP_ALIVE_TIMEOUT_MS default: 5 s.
    expect(result.closedAfterMs).toBeGreaterThanOrEqual(4500);
    expect(result.closedAfterMs).toBeLessThan(8000);
  }, 30_000);
});

/** Polls /healthz every 100 ms on fresh connections; stop() resolves with the slowest answer's time. */
function startHealthPolling(server: ServerProcess) {
  let running = true;
  let worst = 0;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${server.url}/healthz`);
      await res.arrayBuffer();
      worst = Math.max(worst, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return worst;
    },
  };
}
