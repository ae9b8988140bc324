// The input bounds of the relay (src/relay/http/bounds.ts) on a real worker: what real clients send is
// accepted; every member that would reach the engine out of bounds is a VALIDATION_ERROR naming its
// path; extra fields are dropped before the engine; the worker never notices any of it.
import * as mediasoup from 'mediasoup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOUNDS } from '../../src/relay/contract/bounds.js';
import { createProducerBody } from '../../src/relay/kinds/producers/contract.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { chromeH264, chromeOpus, chromeRecvCapabilities, chromeSimulcastVp8, chromeSvcVp9, firefoxSimulcastVp8, h264WithSpropParameterSets } from './client-parameters.js';
import { allowSlowTests, opusParameters, relay, vp8Parameters } from './support.js';

allowSlowTests();

/** The engine's producers and routers by id, to see what reached it. */
const engineProducers = new Map<string, mediasoup.types.Producer>();
const engineRouters = new Map<string, mediasoup.types.Router>();
mediasoup.observer.on('newworker', (worker) =>
  worker.observer.on('newrouter', (router) => {
    engineRouters.set(router.id, router);
    router.observer.on('newtransport', (transport) => transport.observer.on('newproducer', (producer) => engineProducers.set(producer.id, producer)));
  }),
);

let t: TestApp;
let api: ReturnType<typeof relay>;
let pidBefore: number | null;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { accounts: false } });
  api = relay(t);
  pidBefore = (await api.get('/internal/info')).body.workers[0].pid;
});
afterAll(async () => {
  // None of the bodies below reached the worker in a way that hurt it.
  const info = (await api.get('/internal/info')).body;
  expect(info.workers[0]).toMatchObject({ pid: pidBefore, alive: true, deaths: 0 });
  await t.close();
});

async function sendTransport(): Promise<string> {
  const router = await api.router();
  return (await api.transport(router.id, 'send')).id;
}

type Body = Record<string, any>;

/** Expects a 400 VALIDATION_ERROR whose issues include `path`. */
function expectRefused(res: { status: number; body: any }, path: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe('VALIDATION_ERROR');
  expect(res.body.details.issues.map((i: { path: string }) => i.path)).toContain(path);
}

describe('what real clients send', () => {
  it('accepts what Chrome sent through mediasoup-client (opus, VP8 simulcast L1T3, VP9 SVC L3T3_KEY, H264), H264 with SPS/PPS, and Firefox simulcast', async () => {
    const transportId = await sendTransport();
    const sent = [
      ['audio', chromeOpus()],
      ['video', chromeSimulcastVp8()],
      ['video', chromeSvcVp9()],
      ['video', chromeH264()],
      ['video', firefoxSimulcastVp8()],
      ['video', h264WithSpropParameterSets()],
    ] as const;
    const ids: string[] = [];
    for (const [kind, rtpParameters] of sent) {
      const res = await api.post('/internal/v1/producers', { transportId, kind, rtpParameters });
      expect(res.status, `${rtpParameters.codecs[0]!.mimeType}: ${JSON.stringify(res.body)}`).toBe(201);
      ids.push(res.body.id);
      // The engine got every member mediasoup reads, unchanged.
      const engine = engineProducers.get(res.body.id)!.rtpParameters as any;
      expect(engine.mid).toBe(rtpParameters.mid);
      expect(engine.encodings.map((e: { rid?: string; scalabilityMode?: string; maxBitrate?: number }) => [e.rid, e.scalabilityMode, e.maxBitrate])).toEqual(
        rtpParameters.encodings.map((e: { rid?: string; scalabilityMode?: string; maxBitrate?: number }) => [e.rid, e.scalabilityMode, e.maxBitrate]),
      );
      expect(engine.codecs[0].parameters).toEqual(rtpParameters.codecs[0]!.parameters);
      expect(engine.headerExtensions.map((h: { uri: string }) => h.uri)).toEqual(rtpParameters.headerExtensions.map((h) => h.uri));
      if ('msid' in rtpParameters) expect(engine.msid).toBe(rtpParameters.msid);
    }
    // Simulcast is simulcast in the engine, L3T3_KEY is SVC.
    expect(ids.map((id) => engineProducers.get(id)!.type)).toEqual(['simple', 'simulcast', 'svc', 'simple', 'simulcast', 'simple']);
  });

  it('accepts the capabilities mediasoup-client gave Chrome (device.rtpCapabilities) for a consumer', async () => {
    const router = await api.router();
    const send = await api.transport(router.id, 'send');
    const recv = await api.transport(router.id, 'recv');
    for (const [kind, rtpParameters] of [['audio', chromeOpus()], ['video', chromeSimulcastVp8()]] as const) {
      const producer = await api.post('/internal/v1/producers', { transportId: send.id, kind, rtpParameters });
      expect(producer.status, JSON.stringify(producer.body)).toBe(201);
      const consumer = await api.post('/internal/v1/consumers', { transportId: recv.id, producerId: producer.body.id, rtpCapabilities: chromeRecvCapabilities() });
      expect(consumer.status, JSON.stringify(consumer.body)).toBe(201);
      expect(consumer.body.kind).toBe(kind);
    }
  });

  it('checks every member of a consume body each time, whatever capabilities passed before', async () => {
    const router = await api.router();
    const send = await api.transport(router.id, 'send');
    const recv = await api.transport(router.id, 'recv');
    const producer = await api.producer(send.id, 'audio');
    const rtpCapabilities = chromeRecvCapabilities();
    const consume = (body: Body) => api.post('/internal/v1/consumers', { transportId: recv.id, producerId: producer.id, rtpCapabilities, ...body });
    expect((await consume({})).status).toBe(201);
    expectRefused(await consume({ transportId: 't'.repeat(BOUNDS.id + 1) }), 'transportId');
    expectRefused(await consume({ appData: { deep: { deeper: { deepest: { x: 1 } } } } }), 'appData.deep.deeper.deepest');
    expect((await consume({ producerId: 'no-such-producer' })).status).toBe(404);
    // The same capabilities with a member the relay does not know: taken twice, the member dropped.
    const extra = { ...chromeRecvCapabilities(), fecMechanisms: ['x'.repeat(64)] };
    for (let i = 0; i < 2; i += 1) {
      const res = await consume({ rtpCapabilities: extra });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    // Capabilities that differ from those taken in one codec are refused.
    const broken = chromeRecvCapabilities();
    broken.codecs[0]!.clockRate = -1;
    expectRefused(await consume({ rtpCapabilities: broken }), 'rtpCapabilities.codecs.0.clockRate');
  });

  it('accepts the routers own capabilities back as a consumer, and the default codecs listed explicitly', async () => {
    const router = await api.router({
      mediaCodecs: [
        { kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2 },
        { kind: 'video', mimeType: 'video/VP8', clockRate: 90000, parameters: { 'x-google-start-bitrate': 1000 } },
        { kind: 'video', mimeType: 'video/VP9', clockRate: 90000, parameters: { 'profile-id': 2, 'x-google-start-bitrate': 1000 } },
        { kind: 'video', mimeType: 'video/H264', clockRate: 90000, parameters: { 'packetization-mode': 1, 'profile-level-id': '4d0032', 'level-asymmetry-allowed': 1 } },
      ],
      appData: { room: 'r-42', tenant: { id: 7, plan: ['pro'] } },
    });
    const send = await api.transport(router.id, 'send');
    const recv = await api.transport(router.id, 'recv');
    const producer = await api.producer(send.id, 'audio');
    const res = await api.post('/internal/v1/consumers', { transportId: recv.id, producerId: producer.id, rtpCapabilities: router.rtpCapabilities });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(router.rtpCapabilities.headerExtensions.length).toBeGreaterThan(5);
  });

  it('ignores extra fields (a Go signaling server sends roomCode, userId, routerId) and drops them before the engine', async () => {
    const transportId = await sendTransport();
    const rtpParameters: Body = chromeOpus();
    rtpParameters.encodings[0].someFutureField = 'x'.repeat(100_000);
    rtpParameters.codecs[0].vendorNote = { a: 1 };
    rtpParameters.extra = 'y'.repeat(50_000);
    const res = await api.post('/internal/v1/producers', { transportId, kind: 'audio', rtpParameters, roomCode: 'ABC-123', userId: 42, routerId: 'r-1' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const engine = engineProducers.get(res.body.id)!;
    const seen = JSON.stringify(engine.rtpParameters);
    expect(seen).not.toContain('someFutureField');
    expect(seen).not.toContain('vendorNote');
    expect(seen).not.toContain('extra');
    expect(engine.rtpParameters.encodings![0]!.ssrc).toBe(rtpParameters.encodings[0].ssrc);
    // The parsed body holds only what the schema lists, at every level.
    const parsed = createProducerBody.parse({ transportId, kind: 'audio', rtpParameters, roomCode: 'x' });
    expect(Object.keys(parsed).sort()).toEqual(['kind', 'rtpParameters', 'transportId']);
    expect(Object.keys(parsed.rtpParameters.encodings![0]!).sort()).toEqual(['dtx', 'ssrc']);
  });

  it('takes the mimeType case-insensitively, as mediasoup does', async () => {
    const rtpParameters = chromeOpus();
    rtpParameters.codecs[0]!.mimeType = 'AUDIO/OPUS';
    const res = await api.post('/internal/v1/producers', { transportId: await sendTransport(), kind: 'audio', rtpParameters });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it('accepts appData up to the bound and keeps it in the engine', async () => {
    const appData = { pad: 'a'.repeat(BOUNDS.appDataBytes - 10) }; // {"pad":"…"} is 10 bytes more
    const router = await api.post('/internal/v1/routers', { appData });
    expect(router.status, JSON.stringify(router.body)).toBe(201);
    expect(engineRouters.get(router.body.id)!.appData).toEqual(appData);
    const over = await api.post('/internal/v1/routers', { appData: { pad: 'a'.repeat(BOUNDS.appDataBytes - 9) } });
    expectRefused(over, 'appData');
  });
});

describe('out of bounds', () => {
  /** A producer body with one change to Chrome's simulcast parameters. */
  const withChange = (change: (p: Body) => void): Body => {
    const rtpParameters: Body = chromeSimulcastVp8();
    change(rtpParameters);
    return rtpParameters;
  };

  const producerCases: [string, (p: Body) => void, string][] = [
    ['a 100 000-character scalabilityMode', (p) => (p.encodings[0].scalabilityMode = `L1T3${'x'.repeat(100_000)}`), 'rtpParameters.encodings.0.scalabilityMode'],
    ['a scalabilityMode with a suffix mediasoup would ignore', (p) => (p.encodings[0].scalabilityMode = 'L1T3xyz'), 'rtpParameters.encodings.0.scalabilityMode'],
    ['99 spatial and 99 temporal layers', (p) => (p.encodings[0].scalabilityMode = 'L99T99'), 'rtpParameters.encodings.0.scalabilityMode'],
    ['a 200 000-character mimeType', (p) => (p.codecs[0].mimeType = `video/${'a'.repeat(200_000)}`), 'rtpParameters.codecs.0.mimeType'],
    ['a mimeType subtype of 128 characters', (p) => (p.codecs[0].mimeType = `video/${'a'.repeat(128)}`), 'rtpParameters.codecs.0.mimeType'],
    ['a mimeType with a space', (p) => (p.codecs[0].mimeType = 'video/VP8 x'), 'rtpParameters.codecs.0.mimeType'],
    ['a rid of 17 characters', (p) => (p.encodings[0].rid = 'r'.repeat(17)), 'rtpParameters.encodings.0.rid'],
    ['a rid with a space', (p) => (p.encodings[0].rid = 'r 0'), 'rtpParameters.encodings.0.rid'],
    ['a mid of 17 characters', (p) => (p.mid = 'm'.repeat(17)), 'rtpParameters.mid'],
    ['an msid of 130 characters', (p) => (p.msid = 'm'.repeat(130)), 'rtpParameters.msid'],
    ['a cname of 256 characters', (p) => (p.rtcp.cname = 'c'.repeat(256)), 'rtpParameters.rtcp.cname'],
    ['a header extension URI of 257 characters', (p) => (p.headerExtensions[0].uri = `urn:${'u'.repeat(253)}`), 'rtpParameters.headerExtensions.0.uri'],
    ['a header extension id 0', (p) => (p.headerExtensions[0].id = 0), 'rtpParameters.headerExtensions.0.id'],
    ['a header extension id 256', (p) => (p.headerExtensions[0].id = 256), 'rtpParameters.headerExtensions.0.id'],
    ['33 header extensions', (p) => (p.headerExtensions = Array.from({ length: 33 }, (_, i) => ({ uri: `urn:x-${i}`, id: i + 1 }))), 'rtpParameters.headerExtensions'],
    ['a codec parameter key of 65 characters', (p) => (p.codecs[0].parameters = { ['k'.repeat(65)]: 1 }), 'rtpParameters.codecs.0.parameters.' + 'k'.repeat(65)],
    ['a codec parameter value of 1025 characters', (p) => (p.codecs[0].parameters = { 'profile-id': 'v'.repeat(1025) }), 'rtpParameters.codecs.0.parameters.profile-id'],
    ['a codec parameter beyond int32', (p) => (p.codecs[0].parameters = { apt: 2 ** 31 }), 'rtpParameters.codecs.0.parameters.apt'],
    ['a codec parameter that is an object', (p) => (p.codecs[0].parameters = { apt: { a: 1 } }), 'rtpParameters.codecs.0.parameters.apt'],
    ['33 codec parameters', (p) => (p.codecs[0].parameters = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`p${i}`, i]))), 'rtpParameters.codecs.0.parameters'],
    ['17 rtcpFeedback entries', (p) => (p.codecs[0].rtcpFeedback = Array.from({ length: 17 }, () => ({ type: 'nack' }))), 'rtpParameters.codecs.0.rtcpFeedback'],
    ['an rtcpFeedback type of 65 characters', (p) => (p.codecs[0].rtcpFeedback = [{ type: 't'.repeat(65) }]), 'rtpParameters.codecs.0.rtcpFeedback.0.type'],
    ['an rtcpFeedback parameter of 65 characters', (p) => (p.codecs[0].rtcpFeedback = [{ type: 'nack', parameter: 'p'.repeat(65) }]), 'rtpParameters.codecs.0.rtcpFeedback.0.parameter'],
    ['129 codecs', (p) => (p.codecs = Array.from({ length: 129 }, (_, i) => ({ mimeType: 'video/VP8', payloadType: i % 128, clockRate: 90000 }))), 'rtpParameters.codecs'],
    ['17 encodings', (p) => (p.encodings = Array.from({ length: 17 }, (_, i) => ({ rid: `r${i}` }))), 'rtpParameters.encodings'],
    ['payloadType 128', (p) => (p.codecs[0].payloadType = 128), 'rtpParameters.codecs.0.payloadType'],
    ['clockRate 0', (p) => (p.codecs[0].clockRate = 0), 'rtpParameters.codecs.0.clockRate'],
    ['clockRate 2^32', (p) => (p.codecs[0].clockRate = 2 ** 32), 'rtpParameters.codecs.0.clockRate'],
    ['channels 256', (p) => (p.codecs[0].channels = 256), 'rtpParameters.codecs.0.channels'],
    ['ssrc 2^32', (p) => (p.encodings[0].ssrc = 2 ** 32), 'rtpParameters.encodings.0.ssrc'],
    ['ssrc -1', (p) => (p.encodings[0].ssrc = -1), 'rtpParameters.encodings.0.ssrc'],
    ['an rtx ssrc 1.5', (p) => (p.encodings[0].rtx = { ssrc: 1.5 }), 'rtpParameters.encodings.0.rtx.ssrc'],
    ['maxBitrate -1', (p) => (p.encodings[0].maxBitrate = -1), 'rtpParameters.encodings.0.maxBitrate'],
    ['maxBitrate 2^32', (p) => (p.encodings[0].maxBitrate = 2 ** 32), 'rtpParameters.encodings.0.maxBitrate'],
    ['scaleResolutionDownBy 0.5', (p) => (p.encodings[0].scaleResolutionDownBy = 0.5), 'rtpParameters.encodings.0.scaleResolutionDownBy'],
    ['codecPayloadType 200', (p) => (p.encodings[0].codecPayloadType = 200), 'rtpParameters.encodings.0.codecPayloadType'],
    ['priority "urgent"', (p) => (p.encodings[0].priority = 'urgent'), 'rtpParameters.encodings.0.priority'],
  ];

  it.each(producerCases)('refuses a producer with %s', async (_name, change, path) => {
    const transportId = await sendTransport();
    const started = performance.now();
    const res = await api.post('/internal/v1/producers', { transportId, kind: 'video', rtpParameters: withChange(change) });
    expectRefused(res, path);
    // Refused before the engine: fast even for the 200 KiB mimeType (mediasoup's regex took tens of seconds).
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses rtpParameters nested 100 000 levels deep with 400 naming the path (it was a 500)', async () => {
    const transportId = await sendTransport();
    const depth = 100_000;
    const rtpParameters = vp8Parameters();
    const text = JSON.stringify({ transportId, kind: 'video', rtpParameters: { ...rtpParameters, encodings: '@' } }).replace(
      '"@"',
      `${'['.repeat(depth)}${']'.repeat(depth)}`,
    );
    expect(text.length).toBeLessThan(256 * 1024);
    const res = await t.app.request('/internal/v1/producers', {
      method: 'POST',
      headers: { 'X-Internal-Token': t.internalToken, 'Content-Type': 'application/json' },
      body: text,
    });
    const body = (await res.json()) as { details: { issues: { path: string }[] } };
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body).toMatchObject({ code: 'VALIDATION_ERROR', message: 'request body nests too deep' });
    // The body is level 1: the first array too deep is at level 17.
    expect(body.details.issues[0]!.path).toBe(['rtpParameters', 'encodings', ...Array.from({ length: 14 }, () => '0')].join('.'));
  });

  it('bounds the nesting of extra fields too: 16 levels pass, 17 do not', async () => {
    const transportId = await sendTransport();
    const nest = (levels: number): unknown => (levels === 0 ? 1 : { n: nest(levels - 1) });
    // The body is level 1, `extra` opens level 2: 15 more objects reach level 16.
    const ok = await api.post('/internal/v1/producers', { transportId, kind: 'audio', rtpParameters: opusParameters(), extra: nest(15) });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const deep = await api.post('/internal/v1/producers', { transportId, kind: 'audio', rtpParameters: opusParameters(), extra: nest(16) });
    expectRefused(deep, ['extra', ...Array.from({ length: 15 }, () => 'n')].join('.'));
  });

  it('refuses 2 000 router codecs with 400 (it was a 500), and router codecs out of bounds', async () => {
    const many = Array.from({ length: 2000 }, () => ({ kind: 'video', mimeType: 'video/VP8', clockRate: 90000 }));
    expectRefused(await api.post('/internal/v1/routers', { mediaCodecs: many }), 'mediaCodecs');
    expectRefused(await api.post('/internal/v1/routers', { mediaCodecs: [{ kind: 'audio', mimeType: `audio/${'o'.repeat(200_000)}`, clockRate: 48000 }] }), 'mediaCodecs.0.mimeType');
    expectRefused(await api.post('/internal/v1/routers', { mediaCodecs: [{ kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 1000 }] }), 'mediaCodecs.0.channels');
    expectRefused(
      await api.post('/internal/v1/routers', { mediaCodecs: [{ kind: 'video', mimeType: 'video/VP8', clockRate: 90000, parameters: { 'x-google-start-bitrate': 'x'.repeat(2000) } }] }),
      'mediaCodecs.0.parameters.x-google-start-bitrate',
    );
    expectRefused(await api.post('/internal/v1/routers', { mediaCodecs: [{ kind: 'video', mimeType: 'video/VP8', clockRate: 90000, preferredPayloadType: 300 }] }), 'mediaCodecs.0.preferredPayloadType');
    // The payload types: 32 audio codecs fit mediasoup's 32 dynamic ones, 16 video codecs with their RTX too.
    const opus = { kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2 };
    const vp8 = { kind: 'video', mimeType: 'video/VP8', clockRate: 90000 };
    for (const fits of [Array(32).fill(opus), Array(16).fill(vp8)]) {
      const res = await api.post('/internal/v1/routers', { mediaCodecs: fits });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      await api.del(`/internal/v1/routers/${res.body.id}`);
    }
    // One more is refused before the engine (which would throw a plain Error: a 500).
    expectRefused(await api.post('/internal/v1/routers', { mediaCodecs: Array(33).fill(opus) }), 'mediaCodecs');
    expectRefused(await api.post('/internal/v1/routers', { mediaCodecs: [...Array(16).fill(vp8), opus] }), 'mediaCodecs');
  });

  it('refuses consumer capabilities out of bounds', async () => {
    const router = await api.router();
    const send = await api.transport(router.id, 'send');
    const recv = await api.transport(router.id, 'recv');
    const producer = await api.producer(send.id, 'audio');
    const consume = (rtpCapabilities: unknown) => api.post('/internal/v1/consumers', { transportId: recv.id, producerId: producer.id, rtpCapabilities });
    const caps = router.rtpCapabilities;
    expectRefused(await consume({ ...caps, codecs: Array.from({ length: 129 }, () => caps.codecs[0]) }), 'rtpCapabilities.codecs');
    expectRefused(await consume({ ...caps, codecs: [{ ...caps.codecs[0], mimeType: `audio/${'x'.repeat(30_000)}` }] }), 'rtpCapabilities.codecs.0.mimeType');
    expectRefused(await consume({ ...caps, codecs: [{ ...caps.codecs[0], preferredPayloadType: 128 }] }), 'rtpCapabilities.codecs.0.preferredPayloadType');
    expectRefused(await consume({ ...caps, headerExtensions: Array.from({ length: 65 }, () => caps.headerExtensions[0]) }), 'rtpCapabilities.headerExtensions');
    expectRefused(await consume({ ...caps, headerExtensions: [{ ...caps.headerExtensions[0], uri: 'u'.repeat(300) }] }), 'rtpCapabilities.headerExtensions.0.uri');
    expectRefused(await consume({ ...caps, headerExtensions: [{ ...caps.headerExtensions[0], direction: 'sideways' }] }), 'rtpCapabilities.headerExtensions.0.direction');
  });

  it('refuses DTLS fingerprints out of bounds', async () => {
    const router = await api.router();
    const transport = await api.transport(router.id, 'send');
    const connect = (dtlsParameters: unknown) => api.post(`/internal/v1/transports/${transport.id}/connect`, { dtlsParameters });
    expectRefused(await connect({ role: 'client', fingerprints: [{ algorithm: 'sha-256', value: 'AB:'.repeat(50_000) + 'AB' }] }), 'dtlsParameters.fingerprints.0.value');
    expectRefused(await connect({ role: 'client', fingerprints: Array.from({ length: 9 }, () => ({ algorithm: 'sha-1', value: Array(20).fill('AB').join(':') })) }), 'dtlsParameters.fingerprints');
    expectRefused(await connect({ role: 'client', fingerprints: [{ algorithm: 'md5', value: Array(16).fill('AB').join(':') }] }), 'dtlsParameters.fingerprints.0.algorithm');
  });

  it('refuses appData over 4 KiB (250 KiB: 400, not the 413 of a body over 256 KiB) or over 3 levels, on every resource that takes it', async () => {
    const router = await api.router();
    const big = { blob: 'x'.repeat(250 * 1024) };
    const deep = { a: { b: { c: { d: 1 } } } };
    const bodies: [string, Body][] = [
      ['/internal/v1/routers', {}],
      ['/internal/v1/transports', { routerId: router.id, direction: 'send' }],
      ['/internal/v1/producers', { transportId: await sendTransport(), kind: 'audio', rtpParameters: opusParameters() }],
    ];
    for (const [path, body] of bodies) {
      const tooBig = await api.post(path, { ...body, appData: big });
      expectRefused(tooBig, 'appData');
      expect(tooBig.body.details.issues[0].message).toMatch(/at most 4096/);
      expectRefused(await api.post(path, { ...body, appData: deep }), 'appData.a.b.c');
      expectRefused(await api.post(path, { ...body, appData: ['not', 'an', 'object'] }), 'appData');
    }
    // Three levels pass.
    expect((await api.post('/internal/v1/routers', { appData: { a: { b: { c: 1 } } } })).status).toBe(201);
    // Over the body limit, the body limit answers first.
    const huge = await api.post('/internal/v1/routers', { appData: { blob: 'x'.repeat(260 * 1024) } });
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe('VALIDATION_ERROR');
  });

  it('refuses an unpaired surrogate escaped anywhere in a body, in a value or a key (mediasoup 3.11 never answers such a request), and takes paired escapes and escaped backslashes', async () => {
    const raw = async (text: string) => {
      const res = await t.app.request('/internal/v1/routers', { method: 'POST', headers: { 'X-Internal-Token': t.internalToken, 'Content-Type': 'application/json' }, body: text });
      return { status: res.status, body: (await res.json()) as any };
    };
    // JSON.stringify escapes a lone surrogate as \ud800.
    expectRefused(await api.post('/internal/v1/routers', { appData: { name: 'a\ud800b' } }), 'appData.name');
    expectRefused(await api.post('/internal/v1/routers', { appData: { ['k\udfff']: 1 } }), 'appData.k\udfff');
    expectRefused(await raw('{"appData":{"name":"\\uDBFF"}}'), 'appData.name');
    const appData = async (res: { status: number; body: any }) => {
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const kept = (await api.get(`/internal/v1/routers/${res.body.id}`)).body.appData;
      await api.del(`/internal/v1/routers/${res.body.id}`);
      return kept;
    };
    // A pair spelt as two escapes is one character; a backslash before "ud800" is no escape at all.
    expect(await appData(await raw('{"appData":{"smile":"\\ud83d\\ude00"}}'))).toEqual({ smile: '\u{1F600}' });
    expect(await appData(await api.post('/internal/v1/routers', { appData: { text: '\\ud800' } }))).toEqual({ text: '\\ud800' });
  });

  it('refuses ids longer than 128 characters in a body (they never reach the engine either way)', async () => {
    expectRefused(await api.post('/internal/v1/transports', { routerId: 'r'.repeat(129), direction: 'send' }), 'routerId');
    const unknown = await api.post('/internal/v1/transports', { routerId: 'r'.repeat(128), direction: 'send' });
    expect(unknown.body.code).toBe('NOT_FOUND');
  });
});
