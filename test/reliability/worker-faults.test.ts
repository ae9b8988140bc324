// Faults of the media workers under traffic: a worker SIGKILLed during a burst (and both at once), and a
// worker that stops answering (SIGSTOP). Every request answers, with a documented code; the restart
// follows the backoff; traffic resumes; the registry ends consistent with the engine and empty.
import { afterEach, describe, expect, it } from 'vitest';
import { compose } from '../../src/compose.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { allocateRtcPorts, buildTestApp, openTestDatabase, TEST_AUTH_KEY_SECRET, TEST_INTERNAL_TOKEN, type TestApp } from '../support/app.js';
import { EngineWatch } from './support/engine.js';
import { dtls, eventually, loops, opus, sleep } from './support/traffic.js';

const engine = EngineWatch.start();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
}, 30_000);

type App = TestApp['app'];

interface Outcome {
  what: string;
  status: number;
  code?: string;
  ms: number;
  at: number;
}

function recorder(app: App, token: string) {
  const outcomes: Outcome[] = [];
  const t0 = performance.now();
  async function call(what: string, method: string, path: string, body?: unknown) {
    const at = performance.now() - t0;
    const res = await app.request(path, {
      method,
      headers: { 'x-internal-token': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : undefined;
    outcomes.push({ what, status: res.status, code: parsed?.code, ms: performance.now() - t0 - at, at });
    return { status: res.status, body: parsed };
  }
  /** One full media lifecycle; stops at the first step that fails (its resources went with a worker). */
  async function lifecycle(): Promise<boolean> {
    const router = await call('router', 'POST', '/internal/v1/routers', {});
    if (router.status !== 201) return false;
    const id = router.body.id;
    const send = await call('transport', 'POST', '/internal/v1/transports', { routerId: id, direction: 'send' });
    const recv = await call('transport', 'POST', '/internal/v1/transports', { routerId: id, direction: 'recv' });
    if (send.status !== 201 || recv.status !== 201) return false;
    await call('connect', 'POST', `/internal/v1/transports/${send.body.id}/connect`, { dtlsParameters: dtls() });
    const producer = await call('producer', 'POST', '/internal/v1/producers', { transportId: send.body.id, kind: 'audio', rtpParameters: opus() });
    if (producer.status !== 201) return false;
    const consumer = await call('consumer', 'POST', '/internal/v1/consumers', { transportId: recv.body.id, producerId: producer.body.id, rtpCapabilities: router.body.rtpCapabilities });
    if (consumer.status !== 201) return false;
    await call('resume', 'POST', `/internal/v1/consumers/${consumer.body.id}/resume`);
    const closed = await call('close', 'DELETE', `/internal/v1/routers/${id}`);
    return closed.status === 204;
  }
  return { outcomes, call, lifecycle, now: () => performance.now() - t0 };
}

async function info(app: App, token: string) {
  const res = await app.request('/internal/info', { headers: { 'x-internal-token': token } });
  return (await res.json()) as {
    workers: { pid: number | null; alive: boolean; restarts: number; deaths: number; routers: number; lastRestartDelayMs: number | null }[];
    counts: Record<string, number>;
  };
}

/** Every answer is a documented one: success, the resource went with its worker, or the engine failed. */
function expectDocumented(outcomes: Outcome[]) {
  const odd = outcomes.filter(
    (o) => !([200, 201, 204].includes(o.status) || (o.status === 404 && o.code === 'NOT_FOUND') || (o.status === 500 && o.code === 'MEDIASOUP_ERROR')),
  );
  expect(odd).toEqual([]);
}

describe('worker killed with SIGKILL during a burst of media requests', () => {
  it('answers every request, restarts after the backoff delay, and traffic resumes on both workers', { timeout: 90_000 }, async () => {
    const t = await buildTestApp({ MEDIASOUP_WORKERS: '2', MEDIASOUP_RESTART_BASE_MS: '400' });
    cleanups.push(() => t.close());
    const rec = recorder(t.app, t.internalToken);
    const before = await info(t.app, t.internalToken);

    let stop = false;
    let completed = 0;
    const burst = loops(
      async () => {
        if (await rec.lifecycle()) completed += 1;
      },
      { concurrency: 8, maxCount: 100_000, maxMs: 30_000, until: () => stop },
    );
    let killedAt = 0;
    let backAfterMs: number;
    try {
      await sleep(700);
      const victim = before.workers[0]!.pid!;
      killedAt = rec.now();
      process.kill(victim, 'SIGKILL');
      await eventually('worker 0 to be seen dead', async () => (await info(t.app, t.internalToken)).workers[0]!.deaths === 1, 5000, 5);
      backAfterMs = await eventually('worker 0 to be restarted', async () => (await info(t.app, t.internalToken)).workers[0]!.alive, 10_000, 20);
      await sleep(800);
    } finally {
      stop = true;
      await burst;
    }

    const after = await info(t.app, t.internalToken);
    // The backoff: first failure waits the base delay; a new pid; the other worker untouched.
    expect(after.workers[0]).toMatchObject({ alive: true, deaths: 1, restarts: 1, lastRestartDelayMs: 400 });
    expect(after.workers[0]!.pid).not.toBe(before.workers[0]!.pid);
    expect(after.workers[1]).toMatchObject({ pid: before.workers[1]!.pid, alive: true, deaths: 0 });
    expect(backAfterMs).toBeGreaterThanOrEqual(300);
    expect(backAfterMs).toBeLessThan(5000);

    // Every request answered, each with a documented code, none slowly.
    expectDocumented(rec.outcomes);
    const slowest = Math.max(...rec.outcomes.map((o) => o.ms));
    expect(slowest).toBeLessThan(5000);
    const failedNearTheKill = rec.outcomes.filter((o) => o.status >= 400);
    expect(failedNearTheKill.every((o) => o.at + o.ms >= killedAt - 50)).toBe(true);
    console.log(
      `burst: ${rec.outcomes.length} requests, ${completed} lifecycles completed, ${failedNearTheKill.length} answered 404/500 around the kill, slowest ${Math.round(slowest)} ms, worker back after ${Math.round(backAfterMs)} ms`,
    );

    // Traffic resumes, on the restarted worker too: four routers spread two and two.
    const routers = [];
    for (let i = 0; i < 4; i++) routers.push((await rec.call('router', 'POST', '/internal/v1/routers', {})).body.id);
    expect((await info(t.app, t.internalToken)).workers.map((w) => w.routers)).toEqual([2, 2]);
    for (const id of routers) await rec.call('close', 'DELETE', `/internal/v1/routers/${id}`);
    expect(await rec.lifecycle()).toBe(true);
    expect((await info(t.app, t.internalToken)).counts).toEqual({ routers: 0, transports: 0, producers: 0, consumers: 0, dataProducers: 0, dataConsumers: 0, pipeTransports: 0, plainTransports: 0, whipEndpoints: 0, whepEndpoints: 0 });
    expect(engine.open()).toEqual({ routers: 0, transports: 0, producers: 0, consumers: 0, dataProducers: 0, dataConsumers: 0 });
  });

  it('with both workers killed: MEDIASOUP_ERROR at once and /readyz 503 until the restarts, then routers again', { timeout: 60_000 }, async () => {
    const t = await buildTestApp({ MEDIASOUP_WORKERS: '2', MEDIASOUP_RESTART_BASE_MS: '1000' });
    cleanups.push(() => t.close());
    const rec = recorder(t.app, t.internalToken);
    const before = await info(t.app, t.internalToken);
    for (const w of before.workers) process.kill(w.pid!, 'SIGKILL');
    await eventually('both workers seen dead', async () => (await info(t.app, t.internalToken)).workers.every((w) => !w.alive), 5000, 5);
    const ready = await t.app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: { media: string } }).checks.media).toBe('no live worker');
    const refused = await rec.call('router', 'POST', '/internal/v1/routers', {});
    expect(refused).toMatchObject({ status: 500, body: { code: 'MEDIASOUP_ERROR' } });
    expect(rec.outcomes.at(-1)!.ms).toBeLessThan(500);
    await eventually('a router again', async () => (await rec.call('router', 'POST', '/internal/v1/routers', {})).status === 201, 10_000, 100);
    expect((await t.app.request('/readyz')).status).toBe(200);
    expectDocumented(rec.outcomes);
  });
});

describe('worker that stops answering (SIGSTOP)', () => {
  it('fails its requests after the engine deadline instead of holding them, and serves again once it continues', { timeout: 60_000 }, async () => {
    // Built by hand for a short engine deadline (1.5 s instead of 10 s).
    const ports = allocateRtcPorts(1);
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      MEDIASOUP_WORKERS: '1',
      RTC_MIN_PORT: String(ports.min),
      RTC_MAX_PORT: String(ports.max),
      MEDIASOUP_LISTEN_IP: '127.0.0.1',
      INTERNAL_TOKEN: TEST_INTERNAL_TOKEN,
      AUTH_KEY_SECRET: TEST_AUTH_KEY_SECRET,
    });
    const logger = createLogger({ level: 'silent' });
    const { database, drop } = await openTestDatabase();
    const composition = await compose(config, { logger, database, internalToken: TEST_INTERNAL_TOKEN, areas: { accounts: false }, media: { engineTimeoutMs: 1500 } });
    const app = composition.app();
    let pid = 0;
    cleanups.push(async () => {
      if (pid) process.kill(pid, 'SIGCONT');
      composition.release();
      await composition.stop();
      await drop();
    });
    const rec = recorder(app, TEST_INTERNAL_TOKEN);
    const router = await rec.call('router', 'POST', '/internal/v1/routers', {});
    expect(router.status).toBe(201);
    pid = (await info(app, TEST_INTERNAL_TOKEN)).workers[0]!.pid!;

    process.kill(pid, 'SIGSTOP');
    const held = await Promise.all([
      rec.call('router', 'POST', '/internal/v1/routers', {}),
      rec.call('transport', 'POST', '/internal/v1/transports', { routerId: router.body.id, direction: 'send' }),
      rec.call('transport', 'POST', '/internal/v1/transports', { routerId: router.body.id, direction: 'recv' }),
    ]);
    for (const a of held) expect(a).toMatchObject({ status: 500, body: { code: 'MEDIASOUP_ERROR' } });
    for (const o of rec.outcomes.slice(-3)) {
      expect(o.ms).toBeGreaterThanOrEqual(1400);
      expect(o.ms).toBeLessThan(4000);
    }
    process.kill(pid, 'SIGCONT');

    // The worker answers again; what it created late for the failed requests is closed, not leaked.
    expect(await rec.lifecycle()).toBe(true);
    await eventually('late creations closed', () => engine.open().transports === 0 && engine.open().routers === 1, 5000, 20);
    expect((await rec.call('close', 'DELETE', `/internal/v1/routers/${router.body.id}`)).status).toBe(204);
    expect((await info(app, TEST_INTERNAL_TOKEN)).counts).toEqual({ routers: 0, transports: 0, producers: 0, consumers: 0, dataProducers: 0, dataConsumers: 0, pipeTransports: 0, plainTransports: 0, whipEndpoints: 0, whepEndpoints: 0 });
    await eventually('engine empty', () => engine.open().routers === 0, 5000, 20);
  });
});

describe('worker killed while requests are in flight', () => {
  it('answers MEDIASOUP_ERROR naming the worker death, never 404, and logs the request ids in flight', { timeout: 60_000 }, async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
    const t = await buildTestApp({ MEDIASOUP_WORKERS: '1', MEDIASOUP_RESTART_BASE_MS: '300' }, { logger });
    cleanups.push(() => t.close());
    const headers = { 'x-internal-token': t.internalToken, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const res = await t.app.request(path, { method: 'POST', headers, body: JSON.stringify(body) });
      return { status: res.status, requestId: res.headers.get('x-request-id'), body: (await res.json()) as { code: string; message: string; details?: unknown } };
    };
    const router = await post('/internal/v1/routers', {});
    const send = await post('/internal/v1/transports', { routerId: (router.body as unknown as { id: string }).id, direction: 'send' });
    const sendId = (send.body as unknown as { id: string }).id;
    const routerId = (router.body as unknown as { id: string }).id;
    const pid = (await info(t.app, t.internalToken)).workers[0]!.pid!;

    // Stopped, the worker holds every request; killed, it takes the transport and router with it.
    process.kill(pid, 'SIGSTOP');
    const answers = Promise.all([
      post('/internal/v1/producers', { transportId: sendId, kind: 'audio', rtpParameters: opus() }),
      post('/internal/v1/transports', { routerId, direction: 'recv' }),
      post(`/internal/v1/transports/${sendId}/connect`, { dtlsParameters: dtls() }),
    ]);
    await sleep(300);
    process.kill(pid, 'SIGKILL');
    const answered = await answers;

    for (const a of answered) {
      expect(a.status).toBe(500);
      expect(a.body.code).toBe('MEDIASOUP_ERROR');
      expect(a.body.message).toMatch(/worker died during the request/);
      expect(a.body.details).toEqual({ workerPid: pid });
    }
    const requestIds = answered.map((a) => a.requestId);
    expect(requestIds.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    const death = lines.find((l) => l.msg === 'media worker died with engine calls in flight');
    expect(death).toMatchObject({ workerPid: pid });
    expect([...(death!.requestIds as string[])].sort()).toEqual([...requestIds].sort());
    const perCall = lines.filter((l) => l.msg === 'media worker died during an engine call').map((l) => l.requestId);
    expect(perCall.sort()).toEqual([...requestIds].sort());

    // After the death the router is gone: asking for it now is the caller's 404, as before.
    await eventually('worker 0 restarted', async () => (await info(t.app, t.internalToken)).workers[0]!.alive, 10_000, 20);
    expect((await post('/internal/v1/transports', { routerId, direction: 'recv' })).status).toBe(404);
  });
});
