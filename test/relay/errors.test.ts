import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import * as mediasoup from 'mediasoup';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { fromEngineError } from '../../src/relay/engine/errors.js';
import { RelayError } from '../../src/relay/errors.js';
import { createApp } from '../../src/app.js';
import type { Module } from '../../src/http/module.js';

/**
 * Real engine errors, whatever the engine's version exports: an UnsupportedError (a codec the engine
 * does not support) and an InvalidStateError (a call on a closed worker).
 */
async function engineErrors(): Promise<{ unsupported: Error; invalidState: Error }> {
  const worker = await mediasoup.createWorker({ logLevel: 'none' });
  try {
    const unsupported = await worker.createRouter({ mediaCodecs: [{ kind: 'audio', mimeType: 'audio/none', clockRate: 8000 }] }).then(
      () => undefined,
      (error: Error) => error,
    );
    worker.close();
    const invalidState = await worker.createRouter({}).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(unsupported?.name).toBe('UnsupportedError');
    expect(invalidState?.name).toBe('InvalidStateError');
    return { unsupported: unsupported!, invalidState: invalidState! };
  } finally {
    worker.close();
  }
}

describe('fromEngineError', () => {
  it('maps TypeError and UnsupportedError to VALIDATION_ERROR with the engine reason as an issue', async () => {
    const { unsupported } = await engineErrors();
    for (const error of [new TypeError('missing codec.mimeType'), unsupported]) {
      const mapped = fromEngineError(error, 'create router');
      expect(mapped.code).toBe('VALIDATION_ERROR');
      expect(mapped.status).toBe(400);
      expect(mapped.details).toEqual({ issues: [{ path: '', message: error.message }] });
    }
  });

  it('maps any other engine failure to MEDIASOUP_ERROR without echoing it', async () => {
    const { invalidState } = await engineErrors();
    for (const error of [new Error('Channel request timeout'), invalidState, 'odd']) {
      const mapped = fromEngineError(error, 'create transport');
      expect(mapped.toBody()).toEqual({ code: 'MEDIASOUP_ERROR', message: 'media engine failed: create transport' });
      expect(mapped.status).toBe(500);
    }
  });

  it('keeps a RelayError as it is', () => {
    const original = new RelayError('CONFLICT', 'x', { transportId: 't', direction: 'send' });
    expect(fromEngineError(original, 'connect')).toBe(original);
  });
});

describe('errors thrown under /internal, through the app', () => {
  // A module mounted where the relay's routes are: the app's one onError answers what its routes throw.
  const routes = new Hono()
    .get('/boom', () => {
      throw new Error('secret database password in message');
    })
    .get('/json', () => {
      throw new HTTPException(400, { message: 'Malformed JSON in request body' });
    })
    .get('/unauthorized', () => {
      throw new HTTPException(401);
    });
  const thrower: Module = { name: 'thrower', mounts: [{ prefix: '/internal/v1', surface: 'internal', routes }] };
  const internalToken = 'errors-test-token';
  const internal = createApp([thrower], { logger: pino({ level: 'silent' }), internalToken });
  const app = { request: (path: string) => internal.request(`/internal/v1${path}`, { headers: { 'X-Internal-Token': internalToken } }) };

  it('answers INTERNAL_ERROR 500 for anything unknown, revealing nothing', async () => {
    const res = await app.request('/boom');
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ code: 'INTERNAL_ERROR', message: 'internal error' });
  });

  it('turns Hono 400/401 exceptions into VALIDATION_ERROR and UNAUTHORIZED', async () => {
    const json = await app.request('/json');
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: { issues: [{ path: '', message: expect.any(String) }] } });
    const unauthorized = await app.request('/unauthorized');
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toEqual({ code: 'UNAUTHORIZED', message: expect.any(String) });
  });
});
