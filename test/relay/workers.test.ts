import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { allowSlowTests, dtlsParameters, relay, waitFor } from './support.js';

allowSlowTests();

interface LogLine {
  msg: string;
  slot?: number;
  delayMs?: number;
  time: number;
  [key: string]: unknown;
}

/** A pino logger whose lines the test can read. */
function capturingLogger() {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

async function info(t: TestApp) {
  return (await relay(t).get('/internal/info')).body as {
    workers: { pid: number | null; alive: boolean; restarts: number; deaths: number; routers: number; port: number; lastRestartDelayMs: number | null }[];
    counts: Record<string, number>;
  };
}

async function readyz(t: TestApp) {
  const res = await t.app.request('/readyz');
  return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
}

function kill(pid: number | null) {
  if (pid === null) throw new Error('no pid');
  process.kill(pid, 'SIGKILL');
}

describe('two workers', () => {
  it('share the routers, each on its own port; a killed one loses only its own resources and comes back', async () => {
    const t = await buildTestApp({ MEDIASOUP_WORKERS: '2', MEDIASOUP_RESTART_BASE_MS: '100' }, { areas: { accounts: false } });
    try {
      const api = relay(t);
      const { rtcMinPort } = t.config.media;
      const placed: { routerId: string; transportId: string; port: number }[] = [];
      for (let i = 0; i < 4; i++) {
        const router = await api.router();
        const transport = await api.transport(router.id, 'send');
        placed.push({ routerId: router.id, transportId: transport.id, port: transport.iceCandidates[0]!.port });
      }
      const before = await info(t);
      expect(before.workers.map((w) => w.routers)).toEqual([2, 2]);
      expect(before.workers.map((w) => w.port)).toEqual([rtcMinPort, rtcMinPort + 1]);
      expect(new Set(before.workers.map((w) => w.pid)).size).toBe(2);
      expect(placed.filter((p) => p.port === rtcMinPort)).toHaveLength(2);

      kill(before.workers[0]!.pid);
      await waitFor('worker 0 to be seen dead', async () => (await info(t)).workers[0]!.deaths === 1);
      expect((await readyz(t)).status).toBe(200);
      for (const p of placed) {
        const gone = p.port === rtcMinPort;
        const del = await api.del(`/internal/v1/routers/${p.routerId}`);
        expect(del.status, `router on port ${p.port}`).toBe(gone ? 404 : 204);
      }

      const after = await waitFor('worker 0 to restart', async () => {
        const current = await info(t);
        return current.workers[0]!.alive ? current : undefined;
      });
      expect(after.workers[0]).toMatchObject({ alive: true, restarts: 1, deaths: 1, port: rtcMinPort, lastRestartDelayMs: 100 });
      expect(after.workers[0]!.pid).not.toBe(before.workers[0]!.pid);
      expect(after.workers[1]).toMatchObject({ alive: true, restarts: 0, deaths: 0, pid: before.workers[1]!.pid });

      // The restarted worker takes new routers again (fewest routers first) on its old port.
      const router = await api.router();
      const transport = await api.transport(router.id, 'recv');
      expect(transport.iceCandidates[0]!.port).toBe(rtcMinPort);
    } finally {
      await t.close();
    }
  });
});

describe('a single worker killed with SIGKILL', () => {
  it('empties the registry, turns /readyz 503, restarts after a growing delay, and routers work again', async () => {
    const { logger, lines } = capturingLogger();
    const t = await buildTestApp({ MEDIASOUP_RESTART_BASE_MS: '300', MEDIASOUP_RESTART_MAX_MS: '1000' }, { logger, areas: { accounts: false } });
    try {
      const api = relay(t);
      const router = await api.router();
      const send = await api.transport(router.id, 'send');
      const recv = await api.transport(router.id, 'recv');
      const producer = await api.producer(send.id, 'audio');
      const consumer = await api.consumer(recv.id, producer.id, router.rtpCapabilities);
      expect((await info(t)).counts).toEqual({ routers: 1, transports: 2, producers: 1, consumers: 1, dataProducers: 0, dataConsumers: 0, pipeTransports: 0, plainTransports: 0, whipEndpoints: 0, whepEndpoints: 0 });

      const measured: number[] = [];
      for (const expectedDelay of [300, 600, 1000]) {
        const { pid } = (await info(t)).workers[0]!;
        const killedAt = Date.now();
        kill(pid);
        const down = await waitFor('/readyz 503', async () => {
          const r = await readyz(t);
          return r.status === 503 ? r : undefined;
        });
        expect(down.body).toEqual({ status: 'not_ready', checks: { database: 'ok', media: expect.any(String), relay: 'ok' } });
        expect(down.body.checks.media).not.toBe('ok');
        const refused = await api.post('/internal/v1/routers', {});
        expect(refused.status).toBe(500);
        expect(refused.body).toEqual({ code: 'MEDIASOUP_ERROR', message: expect.any(String) });

        await waitFor('/readyz 200 again', async () => (await readyz(t)).status === 200);
        measured.push(Date.now() - killedAt);
        expect(Date.now() - killedAt).toBeGreaterThanOrEqual(expectedDelay);
        expect((await info(t)).workers[0]).toMatchObject({ alive: true, lastRestartDelayMs: expectedDelay });
      }

      // Everything the dead worker held answers 404.
      expect((await api.del(`/internal/v1/routers/${router.id}`)).status).toBe(404);
      expect((await api.del(`/internal/v1/producers/${producer.id}`)).status).toBe(404);
      expect((await api.del(`/internal/v1/consumers/${consumer.id}`)).status).toBe(404);
      expect((await api.post(`/internal/v1/transports/${send.id}/connect`, { dtlsParameters: dtlsParameters() })).status).toBe(404);

      const final = await info(t);
      expect(final.workers[0]).toMatchObject({ alive: true, restarts: 3, deaths: 3, routers: 0 });
      expect(final.counts).toEqual({ routers: 0, transports: 0, producers: 0, consumers: 0, dataProducers: 0, dataConsumers: 0, pipeTransports: 0, plainTransports: 0, whipEndpoints: 0, whepEndpoints: 0 });

      const scheduled = lines.filter((l) => l.msg === 'media worker restart scheduled').map((l) => l.delayMs);
      expect(scheduled).toEqual([300, 600, 1000]);
      expect(lines.filter((l) => l.msg === 'media worker died')).toHaveLength(3);
      expect(lines.filter((l) => l.msg === 'media worker restarted')).toHaveLength(3);
      expect(measured[1]!).toBeGreaterThan(measured[0]!);

      // Routers work again on the restarted worker.
      const again = await api.router();
      const transport = await api.transport(again.id, 'send');
      expect(transport.iceCandidates[0]!.port).toBe(t.config.media.rtcMinPort);
      expect((await api.producer(transport.id, 'audio')).kind).toBe('audio');
    } finally {
      await t.close();
    }
  });

  it('close() cancels a pending restart', async () => {
    const { logger, lines } = capturingLogger();
    const t = await buildTestApp({ MEDIASOUP_RESTART_BASE_MS: '300' }, { logger, areas: { accounts: false } });
    kill((await info(t)).workers[0]!.pid);
    await waitFor('the death', () => lines.some((l) => l.msg === 'media worker restart scheduled'));
    await t.close();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(lines.some((l) => l.msg === 'media worker restarted')).toBe(false);
    expect(t.media.aliveWorkerCount()).toBe(0);
  });
});

describe('a worker that ends once the service has begun to shut down', () => {
  it('SIGINT (a Ctrl-C to the process group): stopped, not died, no restart; its rooms close with shutdown; a crash is still a death', async () => {
    const { logger, lines } = capturingLogger();
    const t = await buildTestApp({ MEDIASOUP_WORKERS: '2', MEDIASOUP_RESTART_BASE_MS: '100' }, { logger, areas: { accounts: false } });
    try {
      const api = relay(t);
      const routers = [await api.router(), await api.router()];
      const before = await info(t);
      expect(before.workers.map((w) => w.routers)).toEqual([1, 1]);
      const subscription = t.events.bus.subscribe();

      t.media.beginShutdown();
      process.kill(before.workers[0]!.pid!, 'SIGINT');
      await waitFor('worker 0 to stop', () => lines.some((l) => l.msg === 'media worker stopped (the service is shutting down)'));
      // A crash after that is still a death, only not restarted.
      kill(before.workers[1]!.pid);
      await waitFor('worker 1 to be seen dead', () => lines.some((l) => l.msg === 'media worker died'));
      await new Promise((resolve) => setTimeout(resolve, 400));

      const after = await info(t);
      expect(after.workers.map((w) => ({ alive: w.alive, deaths: w.deaths, restarts: w.restarts }))).toEqual([
        { alive: false, deaths: 0, restarts: 0 },
        { alive: false, deaths: 1, restarts: 0 },
      ]);
      const said = lines.map((l) => l.msg);
      expect(said.filter((msg) => msg === 'media worker died')).toHaveLength(1);
      expect(lines.find((l) => l.msg === 'media worker died')).toMatchObject({ slot: 1, level: 50 });
      expect(said).toContain('media worker not restarted: the service is shutting down');
      expect(said.filter((msg) => /restart scheduled|restarted$/.test(msg))).toEqual([]);

      const events: Record<string, unknown>[] = [];
      for (let event = subscription.poll(); event; event = subscription.poll()) events.push(event as unknown as Record<string, unknown>);
      subscription.close();
      const closed = (routerId: string) => events.find((e) => e.type === 'router.closed' && e.routerId === routerId);
      expect(closed(routers[0]!.id)).toMatchObject({ reason: 'shutdown' });
      expect(closed(routers[1]!.id)).toMatchObject({ reason: 'worker_died' });
      expect(events.filter((e) => e.type === 'worker.died').map((e) => e.workerPid)).toEqual([before.workers[1]!.pid]);
    } finally {
      await t.close();
    }
  });

  it('SIGINT to a worker alone, the service running on: a death, restarted', async () => {
    const { logger, lines } = capturingLogger();
    const t = await buildTestApp({ MEDIASOUP_RESTART_BASE_MS: '100' }, { logger, areas: { accounts: false } });
    try {
      process.kill((await info(t)).workers[0]!.pid!, 'SIGINT');
      await waitFor('the restart', async () => (await info(t)).workers[0]!.restarts === 1);
      expect(lines.filter((l) => l.msg === 'media worker died')).toHaveLength(1);
      expect((await info(t)).workers[0]).toMatchObject({ alive: true, deaths: 1, lastRestartDelayMs: 100 });
    } finally {
      await t.close();
    }
  });
});
