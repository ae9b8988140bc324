// The zod fast path (src/http/zod-fast-path.ts) against zod itself, on every relay body schema: what
// it accepts, zod accepts with the same output (members, values and order); bodies clients really
// send are accepted by it (so the relay's hot bodies do take it); the schema kinds it does not know
// get no fast path. Generated bodies: the valid ones with parts broken, made long, many or deep, and
// any JSON at all.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import * as mediasoup from 'mediasoup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z, type ZodType } from 'zod';
import { compileFastParse, NOT_SURE } from '../../src/http/zod-fast-path.js';
import { DEFAULT_MEDIA_CODECS, type RouterMediaCodec } from '../../src/media/engine/codecs.js';
import { maxIncomingBitrateBody, preferredLayersBody, priorityBody } from '../../src/media/http/controls.schemas.js';
import { createDataConsumerBody, createDataProducerBody } from '../../src/media/http/data.schemas.js';
import { connectPipeTransportBody, createPipeConsumerBody, createPipeProducerBody, createPipeTransportBody } from '../../src/media/http/pipes.schemas.js';
import { connectTransportBody, createConsumerBody, createProducerBody, createRouterBody, createTransportBody } from '../../src/media/http/schemas.js';
import { chromeOpus, chromeSimulcastVp8 } from '../media/client-parameters.js';
import { anyJson, fuzzParameters, mutated } from '../reliability/support/fuzz.js';

const ID = '0f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2918';
const dtlsParameters = {
  role: 'client',
  fingerprints: [{ algorithm: 'sha-256', value: Array.from({ length: 32 }, (_, i) => (i * 7 + 11).toString(16).padStart(2, '0').toUpperCase()).join(':') }],
};
let routerCapabilities: unknown;
let worker: mediasoup.types.Worker;

beforeAll(async () => {
  // The capabilities a consume body carries: a real router's, with the relay's default codecs.
  worker = await mediasoup.createWorker({ logLevel: 'warn' });
  const router = await worker.createRouter({ mediaCodecs: DEFAULT_MEDIA_CODECS as RouterMediaCodec[] });
  routerCapabilities = JSON.parse(JSON.stringify(router.rtpCapabilities));
});
afterAll(() => worker?.close());

/** Each relay body schema with bodies a signaling server sends (fresh objects each call). */
const schemas: { name: string; schema: ZodType; valid: (() => unknown)[] }[] = [
  {
    name: 'POST /routers',
    schema: createRouterBody,
    valid: [
      () => ({}),
      () => ({ roomCode: 'r-1', appData: { room: 'r-1', tags: ['a', 'b'], owner: { id: 7 } } }),
      () => ({ mediaCodecs: [{ kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2 }, { kind: 'video', mimeType: 'video/VP8', clockRate: 90000, parameters: { 'x-google-start-bitrate': 1000 } }], speakerDetection: { activeSpeaker: true, audioLevels: { intervalMs: 500, thresholdDb: -70 } } }),
    ],
  },
  { name: 'POST /transports', schema: createTransportBody, valid: [() => ({ routerId: ID, direction: 'send', userId: 42 }), () => ({ routerId: ID, direction: 'recv', enableSctp: true, appData: { peer: 'p' } })] },
  { name: 'POST /transports/:id/connect', schema: connectTransportBody, valid: [() => ({ dtlsParameters: structuredClone(dtlsParameters) })] },
  {
    name: 'POST /producers',
    schema: createProducerBody,
    valid: [() => ({ transportId: ID, kind: 'audio', rtpParameters: chromeOpus() }), () => ({ transportId: ID, kind: 'video', rtpParameters: chromeSimulcastVp8(), paused: true, appData: { source: 'webcam' } })],
  },
  {
    name: 'POST /consumers',
    schema: createConsumerBody,
    valid: [() => ({ transportId: ID, producerId: ID, routerId: ID, rtpCapabilities: structuredClone(routerCapabilities) }), () => ({ transportId: ID, producerId: ID, rtpCapabilities: { codecs: [{ kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 100 }] }, appData: { user: 1 } })],
  },
  {
    name: 'POST /data-producers',
    schema: createDataProducerBody,
    valid: [() => ({ transportId: ID, sctpStreamParameters: { streamId: 3, ordered: false, maxRetransmits: 5 }, label: 'chat', protocol: 'json' }), () => ({ transportId: ID })],
  },
  { name: 'POST /data-consumers', schema: createDataConsumerBody, valid: [() => ({ transportId: ID, dataProducerId: ID, appData: {} })] },
  { name: 'POST /pipe-transports', schema: createPipeTransportBody, valid: [() => ({ routerId: ID, enableSrtp: false })] },
  { name: 'POST /pipe-consumers', schema: createPipeConsumerBody, valid: [() => ({ producerId: ID })] },
  { name: 'POST /pipe-producers', schema: createPipeProducerBody, valid: [() => ({ producerId: ID, kind: 'audio', rtpParameters: chromeOpus(), paused: false })] },
  { name: 'PUT preferred layers', schema: preferredLayersBody, valid: [() => ({ spatialLayer: 2, temporalLayer: 1 }), () => ({ spatialLayer: 0 })] },
  { name: 'PUT priority', schema: priorityBody, valid: [() => ({ priority: 200 })] },
  { name: 'PUT max incoming bitrate', schema: maxIncomingBitrateBody, valid: [() => ({ bitrate: 1_500_000 })] },
];

/** Same verdict when the fast path accepts, same output to the member order: the property of the module. */
function expectAgrees(schema: ZodType, value: unknown): 'fast' | 'zod' {
  const fast = compileFastParse(schema)!;
  const accepted = fast(structuredClone(value));
  if (accepted === NOT_SURE) return 'zod';
  const parsed = schema.safeParse(structuredClone(value));
  expect(parsed.success, `zod refuses what the fast path accepted: ${JSON.stringify(value)?.slice(0, 400)}`).toBe(true);
  expect(isDeepStrictEqual(accepted, parsed.data)).toBe(true);
  expect(JSON.stringify(accepted)).toBe(JSON.stringify(parsed.data));
  return 'fast';
}

describe('zod fast path', () => {
  it('compiles every relay body schema but the pipe connect (its ip is a zod string format it does not know)', () => {
    for (const { name, schema } of schemas) {
      expect(compileFastParse(schema) === undefined, name).toBe(schema === connectPipeTransportBody);
    }
    expect(compileFastParse(connectPipeTransportBody)).toBeUndefined();
  });

  it('accepts the bodies clients send, with zod\'s output', () => {
    for (const { name, schema, valid } of schemas) {
      for (const body of valid) expect(expectAgrees(schema, body()), name).toBe('fast');
    }
  });

  for (const { name, schema, valid } of schemas) {
    it(`${name}: what it accepts, zod accepts with the same output (broken, oversized and random bodies)`, () => {
      let fast = 0;
      let zod = 0;
      const bodies = fc.oneof(...valid.map((v) => mutated(v, { oversized: true })), anyJson);
      fc.assert(
        fc.property(bodies, (body) => {
          if (expectAgrees(schema, body) === 'fast') fast += 1;
          else zod += 1;
        }),
        fuzzParameters(),
      );
      // Both sides were exercised: broken bodies went to zod, and some mutations stayed valid.
      expect(zod).toBeGreaterThan(0);
      expect(fast).toBeGreaterThan(0);
    });
  }

  it('never accepts what zod refuses, at each boundary of the checks it compiles', () => {
    const schema = z.object({
      n: z.number().int().min(1).max(10),
      x: z.number().gt(0).lt(1).optional(),
      s: z.string().min(2).max(4).regex(/^a/),
      e: z.enum(['p', 'q']).optional(),
      r: z.record(z.string().max(2), z.union([z.string().max(1), z.number()])).optional(),
      list: z.array(z.boolean()).min(1).max(2).optional(),
      pair: z.object({ a: z.number().optional(), b: z.number().optional() }).refine((p) => p.a !== undefined || p.b !== undefined).optional(),
    });
    const base = { n: 5, s: 'ab' };
    const cases: [unknown, boolean][] = [
      [base, true],
      [{ ...base, n: 0 }, false],
      [{ ...base, n: 11 }, false],
      [{ ...base, n: 1.5 }, false],
      [{ ...base, n: 2 ** 53 }, false],
      [{ ...base, x: 0 }, false],
      [{ ...base, x: 1 }, false],
      [{ ...base, x: 0.5 }, true],
      [{ ...base, s: 'a' }, false],
      [{ ...base, s: 'abcde' }, false],
      [{ ...base, s: 'ba' }, false],
      [{ ...base, e: 'r' }, false],
      [{ ...base, e: 'q' }, true],
      [{ ...base, r: { ab: 'x', c: 3 } }, true],
      [{ ...base, r: { abc: 'x' } }, false],
      [{ ...base, r: { a: 'xy' } }, false],
      [{ ...base, r: [] }, false],
      [{ ...base, list: [] }, false],
      [{ ...base, list: [true, false, true] }, false],
      [{ ...base, list: [true, 1] }, false],
      [{ ...base, pair: {} }, false],
      [{ ...base, pair: { b: 2, c: 3 } }, true],
      [{ ...base, extra: 1 }, true],
      [{ n: 5 }, false],
      [null, false],
      [[base], false],
    ];
    const fast = compileFastParse(schema)!;
    for (const [value, accepted] of cases) {
      expect(fast(value) !== NOT_SURE, JSON.stringify(value)).toBe(accepted);
      expect(schema.safeParse(value).success, JSON.stringify(value)).toBe(accepted);
      expectAgrees(schema, value);
    }
    // A `__proto__` key zod strips from a record: left to zod.
    const proto = { ...base, r: JSON.parse('{"__proto__": "x", "a": 1}') };
    expect(fast(proto)).toBe(NOT_SURE);
    expect(schema.safeParse(proto).data).toEqual({ ...base, r: { a: 1 } });
    // z.int() holds its safe-integer check in its own definition.
    const port = compileFastParse(z.object({ port: z.int().min(1) }))!;
    expect(port({ port: 1.5 })).toBe(NOT_SURE);
    expect(port({ port: 2 ** 53 })).toBe(NOT_SURE);
    expect(port({ port: 80 })).toEqual({ port: 80 });
    // Unknown members stripped, the shape's order kept.
    expect(JSON.stringify(fast({ extra: 1, s: 'ab', n: 5 }))).toBe('{"n":5,"s":"ab"}');
  });

  it('leaves to zod what it does not know: formats, defaults, transforms, catchalls, coercion', () => {
    for (const schema of [
      z.object({ a: z.email() }),
      z.object({ a: z.string().default('x') }),
      z.object({ a: z.string().transform((s) => s.length) }),
      z.object({ a: z.string() }).catchall(z.number()),
      z.object({ a: z.coerce.number() }),
      z.object({ a: z.string().nullable() }),
      z.object({ a: z.literal('x') }),
      z.object({ a: z.ipv4() }),
    ]) {
      expect(compileFastParse(schema)).toBeUndefined();
    }
  });
});
