// Property-based fuzzing of every /internal endpoint (fast-check) on real mediasoup workers: hostile
// bodies (valid ones with one part broken most often, since those reach the engine), content types,
// tokens and path ids; fields made very long, very many or very deep (the bodies that killed or
// stalled a worker before the input bounds). Every answer is the relay's error object or the
// documented success, never a 5xx; no worker dies (checked after every case, and pids unchanged at
// the end) and nothing leaks (registry and engine back to empty).
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAMILIES } from '../../src/relay/kinds/index.js';
import { routerListSchema } from '../../src/relay/kinds/routers/contract.js';
import { allocateRtcPorts, buildTestApp, type TestApp } from '../support/app.js';
import {
  answerOf,
  anyJson,
  contentType,
  expandDeep,
  expectRelayAnswer,
  FuzzStats,
  fuzzParameters,
  headerValueOf,
  mutated,
  notAnId,
  rawBody,
  requestInit,
  type Answer,
  type RawBody,
} from './support/fuzz.js';
import { EngineWatch } from './support/engine.js';
import { dtls } from './support/traffic.js';

const { routerStateSchema } = FAMILIES.routers.contract;

const RELAY_LIMIT = 256 * 1024;
const TURN_SECRET = 'fuzz-turn-secret-0123456789abcdef';
const TURN_TTL_S = 600;
const stats = new FuzzStats('/internal');

/** Every engine object created while the file runs, to check at the end that none is left open. */
const engine = EngineWatch.start();

let t: TestApp;
let pidsBefore: (number | null)[];
let countsBefore: Record<string, number>;
/** Long-lived resources the fuzzed requests point at. */
const base = { plain: '', routerId: '', rtpCapabilities: {} as any, send: '', recv: '', producerId: '', producerSsrc: 0, sctpSend: '', sctpRecv: '', dataProducerId: '', srtp: {} as { cryptoSuite: string; keyBase64: string } };
/** Resources created by fuzzed requests that succeeded; closed after each run. */
type CreatedKind = 'recordings' | 'routers' | 'transports' | 'producers' | 'consumers' | 'data-producers' | 'data-consumers' | 'pipe-transports' | 'plain-transports' | 'whip-endpoints' | 'whep-endpoints';
const created: { kind: CreatedKind; id: string }[] = [];

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await t.app.request(path, {
    method,
    headers: { 'x-internal-token': t.internalToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return answerOf(res);
}

async function must(method: string, path: string, body: unknown, status: number): Promise<any> {
  const a = await call(method, path, body);
  if (a.status !== status) throw new Error(`${method} ${path}: ${a.status} ${a.text}`);
  return a.body;
}

async function info() {
  return (await call('GET', '/internal/info')).body as { workers: { pid: number | null; alive: boolean; deaths: number }[]; counts: Record<string, number> };
}

/** Valid bodies with one or two parts broken, oversized fields (long, many, deep) included. */
const mutatedHostile = (valid: () => unknown) => mutated(valid, { oversized: true });

let ssrc = 5_000_000;
const opusParameters = () => ({
  mid: undefined as string | undefined,
  codecs: [{ mimeType: 'audio/opus', payloadType: 111, clockRate: 48000, channels: 2, parameters: { minptime: 10, useinbandfec: 1 }, rtcpFeedback: [{ type: 'transport-cc' }] }],
  headerExtensions: [
    { uri: 'urn:ietf:params:rtp-hdrext:sdes:mid', id: 1 },
    { uri: 'urn:ietf:params:rtp-hdrext:ssrc-audio-level', id: 10 },
  ],
  encodings: [{ ssrc: ssrc++, dtx: false }],
  rtcp: { cname: 'fuzz', reducedSize: true },
});
const vp8Parameters = () => {
  const primary = (ssrc += 2);
  return {
    codecs: [
      {
        mimeType: 'video/VP8',
        payloadType: 96,
        clockRate: 90000,
        parameters: {},
        rtcpFeedback: [{ type: 'nack' }, { type: 'nack', parameter: 'pli' }, { type: 'ccm', parameter: 'fir' }, { type: 'goog-remb' }],
      },
      { mimeType: 'video/rtx', payloadType: 97, clockRate: 90000, parameters: { apt: 96 }, rtcpFeedback: [] },
    ],
    headerExtensions: [
      { uri: 'http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time', id: 4 },
      { uri: 'urn:3gpp:video-orientation', id: 13 },
    ],
    encodings: [{ ssrc: primary, rtx: { ssrc: primary + 1 }, maxBitrate: 500_000, scalabilityMode: 'L1T3' }],
    rtcp: { cname: 'fuzz-video', reducedSize: true },
  };
};
const simulcastParameters = () => ({
  mid: `m${ssrc++}`,
  codecs: vp8Parameters().codecs,
  headerExtensions: [
    { uri: 'urn:ietf:params:rtp-hdrext:sdes:mid', id: 1 },
    { uri: 'urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id', id: 2 },
    { uri: 'urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id', id: 3 },
  ],
  encodings: [
    { rid: 'r0', scaleResolutionDownBy: 4, maxBitrate: 100_000, scalabilityMode: 'L1T3' },
    { rid: 'r1', scaleResolutionDownBy: 2, maxBitrate: 300_000, scalabilityMode: 'L1T3' },
    { rid: 'r2', maxBitrate: 900_000, scalabilityMode: 'L1T3' },
  ],
  rtcp: { cname: 'fuzz-sim' },
});
const routerCodecs = () => [
  { kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2 },
  { kind: 'video', mimeType: 'video/VP8', clockRate: 90000, parameters: { 'x-google-start-bitrate': 1000 } },
  { kind: 'video', mimeType: 'video/H264', clockRate: 90000, parameters: { 'packetization-mode': 1, 'profile-level-id': '42e01f', 'level-asymmetry-allowed': 1 } },
];

beforeAll(async () => {
  // One WebRtcServer port and seven for the pipe and plain transports (a few open at a time, cleaned up after each run).
  const ports = allocateRtcPorts(8);
  // TURN configured: transports' answers carry iceServers, POST /v1/ice-servers hands them out.
  t = await buildTestApp({
    RECORDINGS_DIR: mkdtempSync(join(tmpdir(), 'fuzz-recordings-')),
    RECORDINGS_MIN_FREE_MB: '0',
    MEDIASOUP_RESTART_BASE_MS: '200',
    RTC_MIN_PORT: String(ports.min),
    RTC_MAX_PORT: String(ports.max),
    MEDIASOUP_PIPE_LISTEN_IP: '127.0.0.1',
    TURN_URLS: 'turn:127.0.0.1:3478?transport=udp,turns:turn.test:443?transport=tcp',
    TURN_SECRET: TURN_SECRET,
    TURN_CREDENTIAL_TTL_S: String(TURN_TTL_S),
  });
  const before = await info();
  pidsBefore = before.workers.map((w) => w.pid);
  countsBefore = before.counts;
  const router = await must('POST', '/internal/v1/routers', {}, 201);
  base.routerId = router.id;
  base.rtpCapabilities = router.rtpCapabilities;
  base.send = (await must('POST', '/internal/v1/transports', { routerId: router.id, direction: 'send' }, 201)).id;
  base.recv = (await must('POST', '/internal/v1/transports', { routerId: router.id, direction: 'recv' }, 201)).id;
  const rtpParameters = opusParameters();
  base.producerSsrc = rtpParameters.encodings[0]!.ssrc;
  base.producerId = (await must('POST', '/internal/v1/producers', { transportId: base.send, kind: 'audio', rtpParameters }, 201)).id;
  base.sctpSend = (await must('POST', '/internal/v1/transports', { routerId: router.id, direction: 'send', enableSctp: true }, 201)).id;
  base.sctpRecv = (await must('POST', '/internal/v1/transports', { routerId: router.id, direction: 'recv', enableSctp: true }, 201)).id;
  base.dataProducerId = (await must('POST', '/internal/v1/data-producers', { transportId: base.sctpSend, sctpStreamParameters: { streamId: 1000 }, label: 'chat' }, 201)).id;
  const pipe = await must('POST', '/internal/v1/pipe-transports', { routerId: router.id }, 201);
  base.srtp = pipe.srtpParameters;
  base.plain = (await must('POST', '/internal/v1/plain-transports', { routerId: router.id, comedia: true }, 201)).id;
  expect((await call('DELETE', `/internal/v1/pipe-transports/${pipe.id}`)).status).toBe(204);
}, 60_000);

afterAll(async () => {
  console.log(stats.summary());
  await t?.close();
}, 60_000);

// Near misses of the test token (one character wrong, one too many, leading space): never the token on
// the wire. Not the token with a space after it: HTTP (and the Fetch Headers) strip that, so it is the token.
const token = fc.oneof(
  { arbitrary: fc.constant<string | undefined>('valid'), weight: 12 },
  { arbitrary: fc.constantFrom<string | undefined>(undefined, '', 'x', 'test-internal-token-0123456789abcdeX', 'test-internal-token-0123456789abcdef0', ' test-internal-token-0123456789abcdeX'), weight: 2 },
  { arbitrary: headerValueOf(300), weight: 1 },
  { arbitrary: headerValueOf(8000), weight: 1 },
);

interface FuzzRequest {
  token: string | undefined;
  contentType: string | undefined;
  query: string;
  body: RawBody;
}

function requests(body: fc.Arbitrary<unknown>): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    token,
    contentType,
    query: fc.oneof(fc.constant(''), fc.constant('?x=1'), fc.string({ unit: 'binary', maxLength: 20 }).map((q) => `?${encodeURIComponent(q)}`)),
    body: rawBody(body, RELAY_LIMIT),
  });
}

async function send(method: string, path: string, r: FuzzRequest): Promise<Answer> {
  const headers = { 'x-internal-token': r.token === 'valid' ? t.internalToken : r.token, 'content-type': r.contentType };
  const started = performance.now();
  const answer = await answerOf(await t.app.request(`${path}${r.query}`, requestInit(method, headers, r.body.text)));
  const ms = performance.now() - started;
  if (ms > 500) console.log(`SLOW ${Math.round(ms)} ms: ${what(method, path, r).slice(0, 600)} → ${answer.status} ${answer.text.slice(0, 200)}`);
  stats.record(answer.status);
  // A death is seen here at the latest on the case after the one that caused it (the worker's exit
  // reaches the engine asynchronously); the answer of the fatal case is a 404 or 500 anyway.
  expect(engine.deaths, `a worker died: ${what(method, path, r).slice(0, 600)} → ${answer.status} ${answer.text.slice(0, 200)}`).toEqual([]);
  return answer;
}

const what = (method: string, path: string, r: FuzzRequest) =>
  `${method} ${path}${r.query.slice(0, 40)} [token ${r.token === 'valid' ? 'valid' : JSON.stringify(r.token?.slice(0, 40))}, ${r.body.note}, ${r.contentType}] ${typeof r.body.text === 'string' ? r.body.text.slice(0, 400) : ''}`;

/** Closes what the fuzzed requests created, so each run starts from the base resources only. */
async function cleanUp(): Promise<void> {
  await close(created.splice(0));
}

/** Closes `resources`, the last made first (a consumer before its transport). */
async function close(resources: typeof created): Promise<void> {
  for (const { kind, id } of resources.reverse()) {
    const a = await call('DELETE', `/internal/v1/${kind}/${id}`);
    // DELETE /recordings/:id answers the stopped recording.
    expect(kind === 'recordings' ? [200, 404] : [204, 404]).toContain(a.status);
  }
}

/**
 * Before a run makes another resource of its own: once 200 are open, the oldest 100 (of runs long
 * finished) are closed, so a long run (FUZZ_RUNS=5000) stays under the base router's cap of 500
 * transports instead of meeting its 429.
 */
async function makeRoom(): Promise<void> {
  if (created.length >= 200) await close(created.splice(0, 100));
}

/** A transport of the base router made for one run (connect and delete need their own). */
async function freshTransport(direction: 'send' | 'recv' = 'send'): Promise<string> {
  await makeRoom();
  const id = (await must('POST', '/internal/v1/transports', { routerId: base.routerId, direction }, 201)).id as string;
  created.push({ kind: 'transports', id });
  return id;
}

/** A pipe transport of the base router made for one run. */
async function freshPipe(): Promise<string> {
  await makeRoom();
  const id = (await must('POST', '/internal/v1/pipe-transports', { routerId: base.routerId }, 201)).id as string;
  created.push({ kind: 'pipe-transports', id });
  return id;
}

/** A plain transport of the base router made for one run. */
async function freshPlain(body: Record<string, unknown> = {}): Promise<string> {
  await makeRoom();
  const id = (await must('POST', '/internal/v1/plain-transports', { routerId: base.routerId, ...body }, 201)).id as string;
  created.push({ kind: 'plain-transports', id });
  return id;
}

/** A consumer of a simulcast producer on the base transports, made for one run. */
async function simulcastConsumer(): Promise<string> {
  await makeRoom();
  const producer = await must('POST', '/internal/v1/producers', { transportId: base.send, kind: 'video', rtpParameters: simulcastParameters() }, 201);
  created.push({ kind: 'producers', id: producer.id });
  const consumer = await must('POST', '/internal/v1/consumers', { transportId: base.recv, producerId: producer.id, rtpCapabilities: base.rtpCapabilities }, 201);
  created.push({ kind: 'consumers', id: consumer.id });
  return consumer.id as string;
}

/** An id: one that exists (from `existing`), an unknown UUID, or not an id at all. */
function idOf(existing: () => Promise<string>): fc.Arbitrary<() => Promise<string>> {
  return fc.oneof(
    { arbitrary: fc.constant(existing), weight: 3 },
    { arbitrary: notAnId.map((id) => () => Promise.resolve(id)), weight: 2 },
  );
}

describe('fuzz /internal', () => {
  it('POST /v1/routers', async () => {
    const body = fc.oneof(
      anyJson,
      mutatedHostile(() => ({ mediaCodecs: routerCodecs(), appData: { room: 'r1', n: 1 } })),
      mutatedHostile(() => ({})),
      mutatedHostile(() => ({ speakerDetection: { activeSpeaker: true, audioLevels: { intervalMs: 500, thresholdDb: -70 } } })),
    );
    await fc.assert(
      fc.asyncProperty(requests(body), async (r) => {
        const a = await send('POST', '/internal/v1/routers', r);
        expectRelayAnswer(a, 201, ['VALIDATION_ERROR'], what('POST', '/routers', r));
        if (a.status === 201) {
          expect((a.body as { id: string }).id).toMatch(/^[0-9a-f-]{36}$/);
          created.push({ kind: 'routers', id: (a.body as { id: string }).id });
        }
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('POST /v1/transports', async () => {
    const valid = () => ({ routerId: base.routerId, direction: 'send', enableSctp: true, appData: { peer: 'p1' } });
    // appData.userId becomes the TURN username's user key when it fits one.
    const withUser = () => ({ ...valid(), direction: 'recv', appData: { userId: 'user-1' } });
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutatedHostile(valid), mutatedHostile(() => ({ ...valid(), direction: 'recv' })), mutatedHostile(withUser))), async (r) => {
        const a = await send('POST', '/internal/v1/transports', r);
        expectRelayAnswer(a, 201, ['VALIDATION_ERROR', 'NOT_FOUND'], what('POST', '/transports', r));
        if (a.status === 201) {
          const transport = a.body as { id: string; iceCandidates: unknown[]; dtlsParameters: unknown; iceServers: { username: string }[] };
          expect(transport.iceCandidates.length).toBeGreaterThan(0);
          expect(transport.iceServers[0]!.username).toMatch(/^\d+:[A-Za-z0-9_.@+-]{1,128}$/);
          expect(a.text).not.toContain(TURN_SECRET);
          created.push({ kind: 'transports', id: transport.id });
        }
      }),
      fuzzParameters(),
    );
  });

  it('POST /v1/transports/:id/connect', async () => {
    const body = fc.oneof(anyJson, mutatedHostile(() => ({ dtlsParameters: dtls() })), mutatedHostile(() => ({ dtlsParameters: { role: 'server', fingerprints: [dtls().fingerprints[0], { algorithm: 'sha-1', value: dtls().fingerprints[0]!.value.slice(0, 59) }] } })));
    await fc.assert(
      fc.asyncProperty(idOf(() => freshTransport(Math.random() < 0.5 ? 'send' : 'recv')), requests(body), async (id, r) => {
        const path = `/internal/v1/transports/${await id()}/connect`;
        const a = await send('POST', path, r);
        expectRelayAnswer(a, 200, ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'], what('POST', path, r));
      }),
      fuzzParameters(),
    );
  });

  it('POST /v1/producers', async () => {
    const valid = (kind: 'audio' | 'video', rtpParameters: unknown) => () => ({ transportId: base.send, kind, rtpParameters, paused: false, appData: { source: 'mic' } });
    const body = fc.oneof(
      anyJson,
      mutatedHostile(() => valid('audio', opusParameters())()),
      mutatedHostile(() => valid('video', vp8Parameters())()),
      mutatedHostile(() => valid('video', simulcastParameters())()),
      // One part broken of a body that collides with the producer already on that transport.
      mutatedHostile(() => valid('audio', { ...opusParameters(), encodings: [{ ssrc: base.producerSsrc }] })()),
      fc.constant(null).map(() => valid('audio', { ...opusParameters(), encodings: [{ ssrc: base.producerSsrc }] })()),
      fc.constant(null).map(() => ({ ...valid('audio', opusParameters())(), transportId: base.recv })),
    );
    await fc.assert(
      fc.asyncProperty(requests(body), async (r) => {
        const a = await send('POST', '/internal/v1/producers', r);
        expectRelayAnswer(a, 201, ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'], what('POST', '/producers', r));
        if (a.status === 201) created.push({ kind: 'producers', id: (a.body as { id: string }).id });
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('POST /v1/consumers', async () => {
    const valid = () => ({ transportId: base.recv, producerId: base.producerId, rtpCapabilities: structuredClone(base.rtpCapabilities), appData: { peer: 'p2' } });
    const body = fc.oneof(anyJson, mutatedHostile(valid), fc.constant(null).map(() => ({ ...valid(), transportId: base.send })));
    await fc.assert(
      fc.asyncProperty(requests(body), async (r) => {
        const a = await send('POST', '/internal/v1/consumers', r);
        expectRelayAnswer(a, 201, ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'CAN_NOT_CONSUME'], what('POST', '/consumers', r));
        if (a.status === 201) {
          expect((a.body as { paused: boolean }).paused).toBe(true);
          created.push({ kind: 'consumers', id: (a.body as { id: string }).id });
        }
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('POST /v1/consumers/:id/resume, DELETE of consumers, producers, transports and routers', async () => {
    const consumer = async () => {
      const body = await must('POST', '/internal/v1/consumers', { transportId: base.recv, producerId: base.producerId, rtpCapabilities: base.rtpCapabilities }, 201);
      created.push({ kind: 'consumers', id: body.id });
      return body.id as string;
    };
    const producer = async () => {
      const body = await must('POST', '/internal/v1/producers', { transportId: base.send, kind: 'audio', rtpParameters: opusParameters() }, 201);
      created.push({ kind: 'producers', id: body.id });
      return body.id as string;
    };
    const router = async () => {
      const body = await must('POST', '/internal/v1/routers', {}, 201);
      created.push({ kind: 'routers', id: body.id });
      return body.id as string;
    };
    const target = fc.oneof(
      idOf(consumer).map((id) => ({ method: 'POST', kind: 'consumers', suffix: '/resume', id, success: 200 })),
      idOf(consumer).map((id) => ({ method: 'DELETE', kind: 'consumers', suffix: '', id, success: 204 })),
      idOf(producer).map((id) => ({ method: 'DELETE', kind: 'producers', suffix: '', id, success: 204 })),
      fc
        .constantFrom<'send' | 'recv'>('send', 'recv')
        .chain((direction) => idOf(() => freshTransport(direction)))
        .map((id) => ({ method: 'DELETE', kind: 'transports', suffix: '', id, success: 204 })),
      idOf(router).map((id) => ({ method: 'DELETE', kind: 'routers', suffix: '', id, success: 204 })),
    );
    await fc.assert(
      fc.asyncProperty(target, requests(anyJson), async (x, r) => {
        const path = `/internal/v1/${x.kind}/${await x.id()}${x.suffix}`;
        const a = await send(x.method, path, r);
        expectRelayAnswer(a, x.success, ['NOT_FOUND', 'VALIDATION_ERROR'], what(x.method, path, r));
        if (a.status === 404 && (a.body as { code: string }).code === 'NOT_FOUND') {
          expect((a.body as { details: { resource: string } }).details.resource).toMatch(/^(consumer|producer|transport|router|route)$/);
        }
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('controls: pause, resume, layers, priority, key frames, ICE restart, bitrate, stats', async () => {
    const producer = async () => {
      const body = await must('POST', '/internal/v1/producers', { transportId: base.send, kind: 'video', rtpParameters: simulcastParameters() }, 201);
      created.push({ kind: 'producers', id: body.id });
      return body.id as string;
    };
    const consumer = async () => simulcastConsumer();
    const simpleConsumer = async () => {
      const body = await must('POST', '/internal/v1/consumers', { transportId: base.recv, producerId: base.producerId, rtpCapabilities: base.rtpCapabilities }, 201);
      created.push({ kind: 'consumers', id: body.id });
      return body.id as string;
    };
    const transport = () => freshTransport(Math.random() < 0.5 ? 'send' : 'recv');
    const layers = fc.oneof(anyJson, mutatedHostile(() => ({ spatialLayer: 1, temporalLayer: 1 })), mutatedHostile(() => ({ spatialLayer: 0 })));
    const target = fc.oneof(
      fc.tuple(idOf(producer), fc.constantFrom('/pause', '/resume')).map(([id, suffix]) => ({ method: 'POST', kind: 'producers', suffix, id, success: 200, body: anyJson })),
      fc.tuple(idOf(consumer), fc.constantFrom('/pause', '/key-frame')).map(([id, suffix]) => ({ method: 'POST', kind: 'consumers', suffix, id, success: suffix === '/pause' ? 200 : 204, body: anyJson })),
      fc.constantFrom(consumer, simpleConsumer).chain((c) => idOf(c)).map((id) => ({ method: 'POST', kind: 'consumers', suffix: '/preferred-layers', id, success: 200, body: layers })),
      idOf(consumer).map((id) => ({ method: 'POST', kind: 'consumers', suffix: '/priority', id, success: 200, body: fc.oneof(anyJson, mutatedHostile(() => ({ priority: 100 }))) })),
      idOf(transport).map((id) => ({ method: 'POST', kind: 'transports', suffix: '/restart-ice', id, success: 200, body: anyJson })),
      idOf(transport).map((id) => ({ method: 'POST', kind: 'transports', suffix: '/max-incoming-bitrate', id, success: 204, body: fc.oneof(anyJson, mutatedHostile(() => ({ bitrate: 2_000_000 }))) })),
      fc
        .constantFrom<[string, () => Promise<string>]>(['transports', transport], ['producers', producer], ['consumers', consumer])
        .chain(([kind, existing]) => idOf(existing).map((id) => ({ method: 'GET', kind, suffix: '/stats', id, success: 200, body: anyJson }))),
    );
    await fc.assert(
      fc.asyncProperty(target.chain((x) => requests(x.body).map((r) => ({ x, r }))), async ({ x, r }) => {
        const path = `/internal/v1/${x.kind}/${await x.id()}${x.suffix}`;
        const a = await send(x.method, path, r);
        expectRelayAnswer(a, x.success, ['NOT_FOUND', 'VALIDATION_ERROR', 'CONFLICT'], what(x.method, path, r));
        if (a.status === 404 && (a.body as { code: string }).code === 'NOT_FOUND') {
          expect((a.body as { details: { resource: string } }).details.resource).toMatch(/^(consumer|producer|transport|route)$/);
        }
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('POST and DELETE /v1/data-producers and /v1/data-consumers', async () => {
    const producerBody = () => ({ transportId: base.sctpSend, sctpStreamParameters: { streamId: 3, ordered: true }, label: 'chat', protocol: 'json', appData: { peer: 'p1' } });
    const consumerBody = () => ({ transportId: base.sctpRecv, dataProducerId: base.dataProducerId, appData: { peer: 'p2' } });
    const dataProducer = async () => {
      const body = await must('POST', '/internal/v1/data-producers', { transportId: base.sctpSend }, 201);
      created.push({ kind: 'data-producers', id: body.id });
      return body.id as string;
    };
    const dataConsumer = async () => {
      const body = await must('POST', '/internal/v1/data-consumers', consumerBody(), 201);
      created.push({ kind: 'data-consumers', id: body.id });
      return body.id as string;
    };
    const target = fc.oneof(
      fc.constant({ method: 'POST', path: () => Promise.resolve('/internal/v1/data-producers'), success: 201, kind: 'data-producers' as const, body: fc.oneof(anyJson, mutatedHostile(producerBody), mutatedHostile(() => ({ ...producerBody(), sctpStreamParameters: { streamId: 4, ordered: false, maxPacketLifeTime: 300 } })), mutatedHostile(() => ({ transportId: base.send }))) }),
      fc.constant({ method: 'POST', path: () => Promise.resolve('/internal/v1/data-consumers'), success: 201, kind: 'data-consumers' as const, body: fc.oneof(anyJson, mutatedHostile(consumerBody), mutatedHostile(() => ({ ...consumerBody(), transportId: base.recv }))) }),
      idOf(dataProducer).map((id) => ({ method: 'DELETE', path: async () => `/internal/v1/data-producers/${await id()}`, success: 204, kind: undefined, body: anyJson })),
      idOf(dataConsumer).map((id) => ({ method: 'DELETE', path: async () => `/internal/v1/data-consumers/${await id()}`, success: 204, kind: undefined, body: anyJson })),
    );
    await fc.assert(
      fc.asyncProperty(target.chain((x) => requests(x.body).map((r) => ({ x, r }))), async ({ x, r }) => {
        const path = await x.path();
        const a = await send(x.method, path, r);
        expectRelayAnswer(a, x.success, ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'CAN_NOT_CONSUME'], what(x.method, path, r));
        if (a.status === 201 && x.kind) created.push({ kind: x.kind, id: (a.body as { id: string }).id });
        if (a.status === 404 && (a.body as { code: string }).code === 'NOT_FOUND') {
          expect((a.body as { details: { resource: string } }).details.resource).toMatch(/^(dataProducer|dataConsumer|transport|route)$/);
        }
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('POST /v1/ice-servers {userId?}', async () => {
    const valid = () => ({ userId: 'user-1' });
    await fc.assert(
      fc.asyncProperty(requests(fc.oneof(anyJson, mutatedHostile(valid), mutatedHostile(() => ({ userId: 42 })), mutatedHostile(() => ({})))), async (r) => {
        const a = await send('POST', '/internal/v1/ice-servers', r);
        expectRelayAnswer(a, 200, ['VALIDATION_ERROR'], what('POST', '/ice-servers', r));
        if (a.status === 200) {
          const answer = a.body as { iceServers: { username: string }[]; expiresIn: number };
          expect(answer.iceServers[0]!.username).toMatch(/^\d+:[A-Za-z0-9_.@+-]{1,128}$/);
          expect(answer.expiresIn).toBe(TURN_TTL_S);
        }
        expect(a.text).not.toContain(TURN_SECRET);
      }),
      fuzzParameters(),
    );
  });

  it('pipe transports: POST, connect, consumers, producers, DELETE', async () => {
    const create = () => ({ routerId: base.routerId, enableSrtp: true, appData: { peerRelay: 'b' } });
    const connect = () => ({ ip: '127.0.0.1', port: 9, srtpParameters: { ...base.srtp } });
    const pipeProducer = () => ({ producerId: randomUUID(), kind: 'video', rtpParameters: vp8Parameters(), paused: false, appData: { from: 'relay-a' } });
    const target = fc.oneof(
      fc.constant({ method: 'POST', path: () => Promise.resolve('/internal/v1/pipe-transports'), success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND'], body: fc.oneof(anyJson, mutatedHostile(create), mutatedHostile(() => ({ routerId: base.routerId, enableSrtp: false }))) }),
      idOf(freshPipe).map((id) => ({ method: 'POST', path: async () => `/internal/v1/pipe-transports/${await id()}/connect`, success: 200, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'], body: fc.oneof(anyJson, mutatedHostile(connect), mutatedHostile(() => ({ ip: '::1', port: 65535, srtpParameters: { ...base.srtp } }))) })),
      idOf(freshPipe).map((id) => ({ method: 'POST', path: async () => `/internal/v1/pipe-transports/${await id()}/consumers`, success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CAN_NOT_CONSUME'], body: fc.oneof(anyJson, mutatedHostile(() => ({ producerId: base.producerId }))) })),
      idOf(freshPipe).map((id) => ({ method: 'POST', path: async () => `/internal/v1/pipe-transports/${await id()}/producers`, success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'], body: fc.oneof(anyJson, mutatedHostile(pipeProducer), mutatedHostile(() => ({ ...pipeProducer(), producerId: base.producerId }))) })),
      idOf(freshPipe).map((id) => ({ method: 'DELETE', path: async () => `/internal/v1/pipe-transports/${await id()}`, success: 204, codes: ['NOT_FOUND'], body: anyJson })),
    );
    await fc.assert(
      fc.asyncProperty(target.chain((x) => requests(x.body).map((r) => ({ x, r }))), async ({ x, r }) => {
        const path = await x.path();
        const a = await send(x.method, path, r);
        expectRelayAnswer(a, x.success, [...x.codes], what(x.method, path, r));
        if (a.status === 201 && path === '/internal/v1/pipe-transports') created.push({ kind: 'pipe-transports', id: (a.body as { id: string }).id });
        if (a.status === 404 && (a.body as { code: string }).code === 'NOT_FOUND') {
          expect((a.body as { details: { resource: string } }).details.resource).toMatch(/^(pipeTransport|producer|router|route)$/);
        }
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('node-to-node cluster routes (parts of rooms, pipes between nodes) on a relay that is no cluster node: 400 or 409, nothing made', async () => {
    const part = () => ({ nodeId: 'node-x', mediaCodecs: [] });
    const pipe = () => ({ roomId: base.routerId, producerId: base.producerId, kind: 'producer', nodeId: 'node-x', ip: '127.0.0.1', port: 40000, srtpParameters: { ...base.srtp } });
    const target = fc.oneof(
      fc.constant({ method: 'POST', path: () => Promise.resolve(`/internal/v1/cluster/rooms/${base.routerId}`), success: 204, body: fc.oneof(anyJson, mutatedHostile(part)) }),
      fc.constant({ method: 'DELETE', path: () => Promise.resolve(`/internal/v1/cluster/rooms/${base.routerId}`), success: 204, body: anyJson }),
      fc.constant({ method: 'POST', path: () => Promise.resolve(`/internal/v1/cluster/rooms/${base.routerId}/speakers`), success: 204, body: fc.oneof(anyJson, mutatedHostile(() => ({ producerId: base.producerId }))) }),
      fc.constant({ method: 'POST', path: () => Promise.resolve('/internal/v1/cluster/pipes'), success: 201, body: fc.oneof(anyJson, mutatedHostile(pipe)) }),
      fc.constant({ method: 'POST', path: () => Promise.resolve(`/internal/v1/cluster/pipes/${randomUUID()}/state`), success: 204, body: fc.oneof(anyJson, mutatedHostile(() => ({ paused: true }))) }),
      fc.constant({ method: 'DELETE', path: () => Promise.resolve(`/internal/v1/cluster/pipes/${randomUUID()}`), success: 204, body: anyJson }),
    );
    const routersBefore = (await call('GET', '/internal/v1/routers')).body;
    await fc.assert(
      fc.asyncProperty(target.chain((x) => requests(x.body).map((r) => ({ x, r }))), async ({ x, r }) => {
        const path = await x.path();
        const a = await send(x.method, path, r);
        // Never made here: only a cluster node takes part in another node's room or pipes a producer to it.
        expect(a.status, what(x.method, path, r)).not.toBe(x.success);
        expectRelayAnswer(a, x.success, ['VALIDATION_ERROR', 'CONFLICT'], what(x.method, path, r));
      }),
      fuzzParameters(),
    );
    expect((await call('GET', '/internal/v1/routers')).body).toEqual(routersBefore);
  });

  it('plain transports: POST, connect, producers and consumers on them, DELETE', async () => {
    const create = () => ({ routerId: base.routerId, comedia: false, rtcpMux: false, enableSrtp: false, appData: { source: 'obs' } });
    const connect = () => ({ ip: '127.0.0.1', port: 5004, rtcpPort: 5005 });
    const target = fc.oneof(
      fc.constant({ method: 'POST', path: () => Promise.resolve('/internal/v1/plain-transports'), success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND'], body: fc.oneof(anyJson, mutatedHostile(create), mutatedHostile(() => ({ routerId: base.routerId, comedia: true }))) }),
      idOf(() => freshPlain({ rtcpMux: false })).map((id) => ({ method: 'POST', path: async () => `/internal/v1/plain-transports/${await id()}/connect`, success: 200, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'], body: fc.oneof(anyJson, mutatedHostile(connect), mutatedHostile(() => ({ ip: '::1', port: 65535 })), mutatedHostile(() => ({ ip: '169.254.169.254', port: 80 }))) })),
      fc.constant({ method: 'POST', path: () => Promise.resolve('/internal/v1/producers'), success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'], body: fc.oneof(anyJson, mutatedHostile(() => ({ transportId: base.plain, kind: 'video', rtpParameters: vp8Parameters() }))) }),
      fc.constant({ method: 'POST', path: () => Promise.resolve('/internal/v1/consumers'), success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CAN_NOT_CONSUME'], body: fc.oneof(anyJson, mutatedHostile(() => ({ transportId: base.plain, producerId: base.producerId, rtpCapabilities: structuredClone(base.rtpCapabilities) }))) }),
      idOf(() => freshPlain()).map((id) => ({ method: 'DELETE', path: async () => `/internal/v1/plain-transports/${await id()}`, success: 204, codes: ['NOT_FOUND'], body: anyJson })),
    );
    await fc.assert(
      fc.asyncProperty(target.chain((x) => requests(x.body).map((r) => ({ x, r }))), async ({ x, r }) => {
        const path = await x.path();
        const a = await send(x.method, path, r);
        expectRelayAnswer(a, x.success, [...x.codes], what(x.method, path, r));
        if (a.status === 201) {
          const kind: CreatedKind = path === '/internal/v1/plain-transports' ? 'plain-transports' : path === '/internal/v1/producers' ? 'producers' : 'consumers';
          created.push({ kind, id: (a.body as { id: string }).id });
        }
        if (a.status === 404 && (a.body as { code: string }).code === 'NOT_FOUND') {
          expect((a.body as { details: { resource: string } }).details.resource).toMatch(/^(plainTransport|transport|producer|router|route)$/);
        }
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('WHIP and WHEP endpoints: POST, DELETE', async () => {
    const freshEndpoint = (kind: 'whip' | 'whep') => async () => {
      await makeRoom();
      const id = (await must('POST', `/internal/v1/${kind}-endpoints`, { routerId: base.routerId }, 201)).id as string;
      created.push({ kind: `${kind}-endpoints`, id });
      return id;
    };
    const codes = ['VALIDATION_ERROR', 'NOT_FOUND', 'ROUTER_CAPACITY_EXCEEDED'];
    const target = fc.oneof(
      fc.constant({ method: 'POST', path: () => Promise.resolve('/internal/v1/whip-endpoints'), success: 201, codes, body: fc.oneof(anyJson, mutatedHostile(() => ({ routerId: base.routerId, ttlS: 60, appData: { userId: 'obs' } }))) }),
      fc.constant({ method: 'POST', path: () => Promise.resolve('/internal/v1/whep-endpoints'), success: 201, codes, body: fc.oneof(anyJson, mutatedHostile(() => ({ routerId: base.routerId, producerIds: [base.producerId], ttlS: 86_400, appData: { room: 'r' } }))) }),
      idOf(freshEndpoint('whip')).map((id) => ({ method: 'DELETE', path: async () => `/internal/v1/whip-endpoints/${await id()}`, success: 204, codes: ['NOT_FOUND'], body: anyJson })),
      idOf(freshEndpoint('whep')).map((id) => ({ method: 'DELETE', path: async () => `/internal/v1/whep-endpoints/${await id()}`, success: 204, codes: ['NOT_FOUND'], body: anyJson })),
    );
    await fc.assert(
      fc.asyncProperty(target.chain((x) => requests(x.body).map((r) => ({ x, r }))), async ({ x, r }) => {
        const path = await x.path();
        const a = await send(x.method, path, r);
        expectRelayAnswer(a, x.success, [...x.codes], what(x.method, path, r));
        if (a.status === 201) {
          created.push({ kind: path.endsWith('whip-endpoints') ? 'whip-endpoints' : 'whep-endpoints', id: (a.body as { id: string }).id });
          expect(JSON.stringify((await call('GET', `/internal/v1/routers/${base.routerId}`)).body)).not.toContain((a.body as { token: string }).token);
        }
        if (a.status === 404 && (a.body as { code: string }).code === 'NOT_FOUND') {
          expect((a.body as { details: { resource: string } }).details.resource).toMatch(/^(whipEndpoint|whepEndpoint|producer|router|route)$/);
        }
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('recordings: POST, GET list and one, DELETE', async () => {
    const create = () => ({ routerId: base.routerId, producerIds: [base.producerId], appData: { meeting: 'm' } });
    const target = fc.oneof(
      fc.constant({ method: 'POST', path: () => Promise.resolve('/internal/v1/recordings'), success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'RECORDING_CAPACITY_EXCEEDED'], body: fc.oneof(anyJson, mutatedHostile(create)) }),
      fc.constantFrom('', '?routerId=x', '?routerId=', `?routerId=${'a'.repeat(300)}`, '?other=1').map((query) => ({ method: 'GET', path: () => Promise.resolve(`/internal/v1/recordings${query}`), success: 200, codes: ['VALIDATION_ERROR'], body: anyJson })),
      idOf(() => Promise.resolve('no-such-recording')).map((id) => ({ method: 'GET', path: async () => `/internal/v1/recordings/${await id()}`, success: 200, codes: ['NOT_FOUND'], body: anyJson })),
      idOf(() => Promise.resolve('..%2F..%2Fetc%2Fpasswd')).map((id) => ({ method: 'DELETE', path: async () => `/internal/v1/recordings/${await id()}`, success: 200, codes: ['NOT_FOUND'], body: anyJson })),
    );
    await fc.assert(
      fc.asyncProperty(target.chain((x) => requests(x.body).map((r) => ({ x, r }))), async ({ x, r }) => {
        const path = await x.path();
        const a = await send(x.method, path, r);
        expectRelayAnswer(a, x.success, [...x.codes], what(x.method, path, r));
        if (a.status === 201) created.push({ kind: 'recordings', id: (a.body as { id: string }).id });
        await cleanUp();
      }),
      // Each accepted body starts an ffmpeg: fewer runs than the other endpoints'.
      fuzzParameters(60),
    );
  });

  it('webhook deliveries: GET the parked list, POST a redelivery', async () => {
    const target = fc.oneof(
      fc
        .oneof(
          fc.constantFrom('', '?status=failed', '?status=delivered', '?status=', '?limit=0', '?limit=1', '?limit=500', '?limit=501', '?limit=-1', '?limit=1e3', '?limit=abc', `?status=${'f'.repeat(300)}`, '?other=1'),
          fc.string({ maxLength: 40 }).map((text) => `?limit=${encodeURIComponent(text)}`),
        )
        .map((query) => ({ method: 'GET', path: () => Promise.resolve(`/internal/v1/webhook/deliveries${query}`), success: 200, codes: ['VALIDATION_ERROR'], body: anyJson })),
      idOf(() => Promise.resolve('msg_00000000000000000000000000000000')).map((id) => ({
        method: 'POST',
        path: async () => `/internal/v1/webhook/deliveries/${await id()}/redeliver`,
        success: 202,
        codes: ['NOT_FOUND', 'CONFLICT'],
        body: anyJson,
      })),
    );
    await fc.assert(
      fc.asyncProperty(target.chain((x) => requests(x.body).map((r) => ({ x, r }))), async ({ x, r }) => {
        const path = await x.path();
        const a = await send(x.method, path, r);
        expectRelayAnswer(a, x.success, [...x.codes], what(x.method, path, r));
        if (a.status === 200) expect(Array.isArray((a.body as { deliveries: unknown }).deliveries)).toBe(true);
        if (a.status === 404 && (a.body as { code: string }).code === 'NOT_FOUND') expect((a.body as { details: { resource: string } }).details.resource).toMatch(/^(delivery|route)$/);
      }),
      fuzzParameters(),
    );
  });

  it('every field of every body too long, too many or too deep, in requests otherwise valid', async () => {
    // One field of a valid body made oversized (a string grown to 200 000 characters, an array of
    // 2 000 copies, nesting 100 000 deep …), sent with the token and as JSON, so that it meets the
    // schema and, were a bound missing, the engine: the bodies that killed or stalled a worker.
    type Target = { path: string; body: () => unknown; success: number; codes: string[]; kind?: CreatedKind };
    const producer = (kind: 'audio' | 'video', rtpParameters: () => unknown) => () => ({ transportId: base.send, kind, rtpParameters: rtpParameters(), paused: false, appData: { source: 'cam' } });
    const producerCodes = ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'];
    const targets: Target[] = [
      { path: '/internal/v1/routers', body: () => ({ mediaCodecs: routerCodecs(), appData: { room: 'r1', tags: ['a', 'b'] } }), success: 201, codes: ['VALIDATION_ERROR'], kind: 'routers' },
      { path: '/internal/v1/transports', body: () => ({ routerId: base.routerId, direction: 'send', enableSctp: true, appData: { peer: 'p1' } }), success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND'], kind: 'transports' },
      { path: '/internal/v1/producers', body: producer('audio', opusParameters), success: 201, codes: producerCodes, kind: 'producers' },
      { path: '/internal/v1/producers', body: producer('video', vp8Parameters), success: 201, codes: producerCodes, kind: 'producers' },
      { path: '/internal/v1/producers', body: producer('video', simulcastParameters), success: 201, codes: producerCodes, kind: 'producers' },
      {
        path: '/internal/v1/consumers',
        body: () => ({ transportId: base.recv, producerId: base.producerId, rtpCapabilities: structuredClone(base.rtpCapabilities) }),
        success: 201,
        codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CAN_NOT_CONSUME'],
        kind: 'consumers',
      },
      {
        path: '/internal/v1/routers',
        body: () => ({ speakerDetection: { activeSpeaker: true, audioLevels: { intervalMs: 500, thresholdDb: -70 } } }),
        success: 201,
        codes: ['VALIDATION_ERROR'],
        kind: 'routers',
      },
      {
        path: '/internal/v1/data-producers',
        body: () => ({ transportId: base.sctpSend, sctpStreamParameters: { streamId: 7, ordered: false, maxRetransmits: 3 }, label: 'chat', protocol: 'json', appData: { peer: 'p1' } }),
        success: 201,
        codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'],
        kind: 'data-producers',
      },
      {
        path: '/internal/v1/data-consumers',
        body: () => ({ transportId: base.sctpRecv, dataProducerId: base.dataProducerId, appData: { peer: 'p2' } }),
        success: 201,
        codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'CAN_NOT_CONSUME'],
        kind: 'data-consumers',
      },
      { path: '/internal/v1/pipe-transports', body: () => ({ routerId: base.routerId, enableSrtp: true, appData: { peerRelay: 'b' } }), success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND'], kind: 'pipe-transports' },
      { path: '/internal/v1/pipe-transports/{pipe}/connect', body: () => ({ ip: '127.0.0.1', port: 9, srtpParameters: { ...base.srtp } }), success: 200, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'] },
      {
        path: '/internal/v1/pipe-transports/{pipe}/producers',
        body: () => ({ producerId: randomUUID(), kind: 'video', rtpParameters: vp8Parameters(), appData: { from: 'relay-a' } }),
        success: 201,
        codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'],
      },
      { path: '/internal/v1/ice-servers', body: () => ({ userId: 'user-1' }), success: 200, codes: ['VALIDATION_ERROR'] },
      { path: '/internal/v1/recordings', body: () => ({ routerId: base.routerId, producerIds: [base.producerId], appData: { meeting: 'm' } }), success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT', 'RECORDING_CAPACITY_EXCEEDED'], kind: 'recordings' },
      { path: '/internal/v1/plain-transports', body: () => ({ routerId: base.routerId, comedia: false, rtcpMux: false, appData: { source: 'obs' } }), success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND'], kind: 'plain-transports' },
      { path: '/internal/v1/plain-transports/{plain}/connect', body: () => ({ ip: '127.0.0.1', port: 5004, rtcpPort: 5005 }), success: 200, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'] },
      { path: '/internal/v1/whip-endpoints', body: () => ({ routerId: base.routerId, ttlS: 600, appData: { userId: 'obs' } }), success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND'], kind: 'whip-endpoints' },
      { path: '/internal/v1/whep-endpoints', body: () => ({ routerId: base.routerId, producerIds: [base.producerId], appData: { room: 'r' } }), success: 201, codes: ['VALIDATION_ERROR', 'NOT_FOUND'], kind: 'whep-endpoints' },
      { path: `/internal/v1/transports/{send}/max-incoming-bitrate`, body: () => ({ bitrate: 1_000_000 }), success: 204, codes: ['VALIDATION_ERROR', 'NOT_FOUND'] },
      { path: `/internal/v1/consumers/{consumer}/priority`, body: () => ({ priority: 7 }), success: 200, codes: ['VALIDATION_ERROR', 'NOT_FOUND'] },
      { path: `/internal/v1/consumers/{consumer}/preferred-layers`, body: () => ({ spatialLayer: 1, temporalLayer: 2 }), success: 200, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'] },
    ];
    const connectTarget = (body: unknown): Target => ({ path: 'connect', body: () => body, success: 200, codes: ['VALIDATION_ERROR', 'NOT_FOUND', 'CONFLICT'] });
    const cases = fc.oneof(
      ...targets.map((target) => mutated(target.body, { oversized: 'only' }).map((body) => ({ target, body }))),
      mutated(() => ({ dtlsParameters: dtls() }), { oversized: 'only' }).map((body) => ({ target: connectTarget(body), body })),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ({ target, body }) => {
        const path =
          target.path === 'connect'
            ? `/internal/v1/transports/${await freshTransport()}/connect`
            : target.path.includes('{consumer}')
              ? target.path.replace('{consumer}', await simulcastConsumer())
              : target.path.includes('{pipe}')
                ? target.path.replace('{pipe}', await freshPipe())
                : target.path.includes('{plain}')
                  ? target.path.replace('{plain}', await freshPlain({ rtcpMux: false }))
                  : target.path.replace('{send}', base.send);
        const text = body === undefined ? undefined : expandDeep(JSON.stringify(body));
        const r: FuzzRequest = { token: 'valid', contentType: 'application/json', query: '', body: { text, note: 'oversized field' } };
        const a = await send('POST', path, r);
        expectRelayAnswer(a, target.success, target.codes, what('POST', path, r));
        if (a.status === 201 && target.kind) created.push({ kind: target.kind, id: (a.body as { id: string }).id });
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('GET /v1/routers and /v1/routers/:id (state to reconcile from)', async () => {
    // The base router holds transports, a producer and, now and then, consumers with appData.
    const target = fc.oneof(
      fc.constant({ path: () => Promise.resolve('/internal/v1/routers'), schema: routerListSchema }),
      idOf(() => Promise.resolve(base.routerId)).map((id) => ({ path: async () => `/internal/v1/routers/${await id()}`, schema: routerStateSchema })),
    );
    await fc.assert(
      fc.asyncProperty(target, requests(anyJson), fc.boolean(), async (x, r, withConsumer) => {
        if (withConsumer) {
          const body = { transportId: base.recv, producerId: base.producerId, rtpCapabilities: base.rtpCapabilities, appData: { peer: 'p3', deep: { a: [1, 'x'] } } };
          created.push({ kind: 'consumers', id: (await must('POST', '/internal/v1/consumers', body, 201)).id });
        }
        const path = await x.path();
        const a = await send('GET', path, r);
        expectRelayAnswer(a, 200, ['NOT_FOUND'], what('GET', path, r));
        if (a.status === 200) x.schema.parse(a.body);
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('GET /info, the docs page, unknown routes and wrong methods under /internal', async () => {
    const path = fc.oneof(
      fc.constantFrom('/internal', '/internal/', '/internal/info', '/internal/info/', '/internal/v1', '/internal/v2/routers', '/internal/v1/ROUTERS', '/internal/v1/routers/', '/internal/v1/routers', '/internal/metrics'),
      // The docs page and its assets answer without the token; nothing else near them does.
      fc.constantFrom(
        '/internal/docs',
        '/internal/docs/',
        '/internal/DOCS',
        '/internal/docs/assets',
        '/internal/docs/assets/swagger-ui-dist/swagger-ui.css',
        '/internal/docs/assets/swagger-ui-dist/swagger-ui-bundle.js',
        '/internal/docs/assets/swagger-ui-dist/index.html',
        '/internal/docs/assets/swagger-ui-dist/swagger-ui.css.map',
        '/internal/docs/assets/swagger-ui-dist/..%2F..%2F..%2Fpackage.json',
      ),
      fc
        .tuple(
          fc.constantFrom('routers', 'transports', 'producers', 'consumers', 'data-producers', 'data-consumers', 'pipe-transports'),
          notAnId,
          fc.constantFrom('', '/connect', '/resume', '/pause', '/stats', '/preferred-layers', '/priority', '/key-frame', '/restart-ice', '/max-incoming-bitrate', '/producers', '/consumers', '/x'),
        )
        .map(([k, id, s]) => `/internal/v1/${k}/${id}${s}`),
      fc.array(notAnId, { maxLength: 4 }).map((segments) => `/internal/${segments.join('/')}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'), path, requests(anyJson), async (method, p, r) => {
        const a = await send(method, p, r);
        const resolved = new URL(p, 'http://localhost').pathname;
        if (resolved === '/internal' || resolved.startsWith('/internal/')) {
          expect(a.status, what(method, p, r)).toBeLessThan(500);
          if (a.status >= 400) expectRelayAnswer(a, 0, ['NOT_FOUND', 'VALIDATION_ERROR', 'CONFLICT', 'CAN_NOT_CONSUME'], what(method, p, r));
          // Without a valid token, only the page and its two assets answer (and only to GET).
          if (a.status === 200 && r.token !== 'valid') {
            expect([method, resolved], what(method, p, r)).toEqual(['GET', expect.stringMatching(/^\/internal\/docs(\/assets\/swagger-ui-dist\/swagger-ui(\.css|-bundle\.js))?$/)]);
          }
          if (a.status === 201 && resolved === '/internal/v1/routers') created.push({ kind: 'routers', id: (a.body as { id: string }).id });
        } else {
          expect(a.status, what(method, p, r)).toBe(404);
        }
        await cleanUp();
      }),
      fuzzParameters(),
    );
  });

  it('left every worker alive and nothing behind, in the registry or in the engine', async () => {
    expect(stats.serverErrors).toBe(0);
    expect((await call('DELETE', `/internal/v1/routers/${base.routerId}`)).status).toBe(204);
    const after = await info();
    expect(after.workers.map((w) => w.pid)).toEqual(pidsBefore);
    expect(after.workers.every((w) => w.alive && w.deaths === 0)).toBe(true);
    expect(after.counts).toEqual(countsBefore);
    expect(after.counts).toEqual({ routers: 0, transports: 0, producers: 0, consumers: 0, dataProducers: 0, dataConsumers: 0, pipeTransports: 0, plainTransports: 0, whipEndpoints: 0, whepEndpoints: 0 });
    // The engine agrees: everything it created during the file is closed.
    expect(engine.routers.length).toBeGreaterThan(10);
    expect(engine.open()).toEqual({ routers: 0, transports: 0, producers: 0, consumers: 0, dataProducers: 0, dataConsumers: 0 });
    console.log(`engine objects created during the fuzz: ${JSON.stringify(engine.created())}`);
  });
});
