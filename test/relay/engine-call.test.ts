// The engine call's deadline (src/relay/engine/call.ts): one timer per call, cleared when it settles.
// The calls here are plain promises standing for engine answers; test/reliability/worker-faults.test.ts
// holds a real worker with SIGSTOP for the same deadline end to end.
import { describe, expect, it } from 'vitest';
import { createEngineCall } from '../../src/relay/engine/call.js';
import { RelayError } from '../../src/relay/errors.js';
import { createLogger } from '../../src/logger.js';

const TIMEOUT_MS = 200;

function caller() {
  return createEngineCall({ timeoutMs: TIMEOUT_MS, logger: createLogger({ level: 'silent' }), isOpen: () => true, workerOf: () => undefined }).engine;
}

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

describe('engine call deadline', () => {
  it('fails a call the engine never answers with MEDIASOUP_ERROR, after the timeout and within a tick of it', async () => {
    const engine = caller();
    const started = performance.now();
    const error = await engine('create router', () => new Promise<never>(() => {})).catch((e: unknown) => e);
    const ms = performance.now() - started;
    expect(error).toBeInstanceOf(RelayError);
    expect((error as RelayError).code).toBe('MEDIASOUP_ERROR');
    expect((error as RelayError).message).toContain('did not answer in time: create router');
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 1);
    expect(ms).toBeLessThan(TIMEOUT_MS + 150);
  });

  it('holds each call to its own deadline when calls start at different times', async () => {
    const engine = caller();
    const started = performance.now();
    const first = engine('first', () => new Promise<never>(() => {})).catch(() => performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = engine('second', () => new Promise<never>(() => {})).catch(() => performance.now() - started);
    const [a, b] = await Promise.all([first, second]);
    expect(a).toBeLessThan(TIMEOUT_MS + 90);
    expect(b).toBeGreaterThanOrEqual(100 + TIMEOUT_MS - 1);
  });

  it('closes what the engine creates after the deadline', async () => {
    const engine = caller();
    let answer!: (resource: { closed: boolean; close(): void }) => void;
    const late = { closed: false, close() { this.closed = true; } };
    const failed = await engine('create transport', () => new Promise<typeof late>((resolve) => (answer = resolve))).catch((e: unknown) => e);
    expect((failed as RelayError).code).toBe('MEDIASOUP_ERROR');
    answer(late);
    await new Promise((resolve) => setImmediate(resolve));
    expect(late.closed).toBe(true);
  });

  it('answers calls that settle in time, and leaves no timer running once none is under way', async () => {
    const engine = caller();
    const before = timers();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => engine('op', () => Promise.resolve(i))));
    expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const refused = await engine('op', () => Promise.reject(new Error('boom'))).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RelayError);
    // Every call's own timer was cleared when it settled: none is left running.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS / 10 + 50));
    expect(timers()).toBe(before);
  });
});
