// Shutdown whatever happened to the process's output (issue 32 #16): the real server with its stdout
// on a pipe and one room open, SIGTERM, a second SIGTERM a second later (the drain ends at once), and
// the reading side of the pipe gone or no longer reading. The process must exit within the documented
// bound (the drain ended by the second signal, then SHUTDOWN_DEADLINE_MS, 4 s) and never hang on a log
// line it cannot write. Before the fix it never exited when the reader closed after the signals: pino's
// exit hook flushed the last lines synchronously and retried EPIPE every 100 ms for ever.
import { Agent, request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVER_TOKEN, startServer, type ServerProcess } from '../support/server-process.js';
import { sleep } from './support/traffic.js';

/** The second signal ends the drain at once; the shutdown then has 4 s (SHUTDOWN_DEADLINE_MS); a margin for a loaded machine. */
const EXIT_BOUND_MS = 6000;

let server: ServerProcess | undefined;
afterEach(async () => {
  // Always gone, even when a test failed: SIGTERM (ignored by a hung process), SIGKILL after 1 s.
  await server?.stop(1000);
  server = undefined;
});

async function openRoom(s: ServerProcess): Promise<void> {
  const res = await fetch(`${s.url}/internal/v1/routers`, { method: 'POST', headers: { 'X-Internal-Token': SERVER_TOKEN, 'Content-Type': 'application/json' }, body: '{}' });
  expect(res.status).toBe(201);
  await res.arrayBuffer();
}

/** SIGTERM, a second one 1 s later; `between` runs at the moment given. How long until the process is gone (Infinity: not within 10 s). */
async function twoSignals(s: ServerProcess, hooks: { beforeFirst?: () => void; afterSecond?: () => void }): Promise<{ ms: number; code: number | null }> {
  hooks.beforeFirst?.();
  const started = performance.now();
  s.child.kill('SIGTERM');
  await sleep(1000);
  s.child.kill('SIGTERM');
  hooks.afterSecond?.();
  const exit = await Promise.race([s.exited, sleep(10_000).then(() => undefined)]);
  return exit ? { ms: exit.at - started, code: exit.code } : { ms: Infinity, code: null };
}

describe('shutdown with the log reader gone', () => {
  it('exits within the bound when the reader of its stdout closes after the second SIGTERM', { timeout: 60_000 }, async () => {
    server = await startServer({ DRAIN_TIMEOUT_S: '30', LOG_LEVEL: 'info' });
    await openRoom(server);
    const s = server;
    const exit = await twoSignals(s, { afterSecond: () => s.child.stdout!.destroy() });
    expect(exit.ms).toBeLessThan(EXIT_BOUND_MS);
    expect(exit.code).toBe(0);
  });

  it('exits within the bound when the reader of its stdout closed before the first SIGTERM', { timeout: 60_000 }, async () => {
    server = await startServer({ DRAIN_TIMEOUT_S: '30', LOG_LEVEL: 'info' });
    await openRoom(server);
    const s = server;
    const exit = await twoSignals(s, { beforeFirst: () => s.child.stdout!.destroy() });
    expect(exit.ms).toBeLessThan(EXIT_BOUND_MS);
    expect(exit.code).toBe(0);
  });

  it('(control) with the reader there, exits at once after the second SIGTERM and its last line, "shutdown complete", reaches the reader', { timeout: 60_000 }, async () => {
    server = await startServer({ DRAIN_TIMEOUT_S: '30', LOG_LEVEL: 'info' });
    await openRoom(server);
    const exit = await twoSignals(server, {});
    expect(exit.ms).toBeLessThan(EXIT_BOUND_MS);
    expect(exit.code).toBe(0);
    // The stdout pipe is read to its end once the process is gone.
    await new Promise((resolve) => (server!.child.stdout!.readableEnded ? resolve(undefined) : server!.child.stdout!.once('end', resolve)));
    const messages = server.logLines().map((l) => l.msg);
    expect(messages).toContain('draining before shutdown');
    expect(messages.at(-1)).toBe('shutdown complete');
  });

  it('keeps serving while the reader of its stdout stops reading, and still exits within the bound', { timeout: 90_000 }, async () => {
    server = await startServer({ DRAIN_TIMEOUT_S: '30', LOG_LEVEL: 'info' });
    await openRoom(server);
    const s = server;
    // The reader stops reading: the pipe fills with request log lines (one per request, ~200 bytes).
    s.child.stdout!.pause();
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const get = () =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: s.port, path: '/healthz', agent, timeout: 5000 }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
        req.on('error', reject);
        req.end();
      });
    try {
      // 4 MiB of log lines at most, far beyond what the pipe holds (a few hundred KiB), in bounded time.
      const deadline = performance.now() + 30_000;
      let sent = 0;
      while (sent < 20_000 && performance.now() < deadline) {
        const statuses = await Promise.all(Array.from({ length: 8 }, get));
        expect(statuses.every((status) => status === 200)).toBe(true);
        sent += 8;
      }
      expect(sent).toBeGreaterThan(4000);
      // The service still answers at once: its log lines wait (or are dropped), not its requests.
      const before = performance.now();
      expect(await get()).toBe(200);
      expect(performance.now() - before).toBeLessThan(1000);
    } finally {
      agent.destroy();
    }
    const exit = await twoSignals(s, {});
    expect(exit.ms).toBeLessThan(EXIT_BOUND_MS);
    expect(exit.code).toBe(0);
  });
});
