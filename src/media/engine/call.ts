// Every call into the engine goes through here: a deadline, late results closed, the engine's message
// logged and mapped, NOT_FOUND when a resource the call needed went away meanwhile.
import type { Logger } from '../../logger.js';
import { notFound, RelayError } from '../errors.js';
import type { ResourceKind } from '../registry/kinds.js';
import { fromEngineError } from './errors.js';

/**
 * mediasoup 3.11 has no timeout of its own: a request the worker never answers (it drops one whose
 * JSON it cannot parse; a stopped worker answers nothing) would hold its HTTP request for ever.
 */
export const ENGINE_TIMEOUT_MS = 10_000;

/** Resources an engine call depends on, as [kind, id]: the first one gone is the answer to a failure. */
export type Needs = [ResourceKind, string][];

/**
 * Runs `call` under the deadline and maps its failure.
 * @example const transport = await engine('create transport', () => router.createWebRtcTransport(o), [['router', routerId]])
 */
export type EngineCall = <T>(operation: string, call: () => Promise<T>, needs?: Needs) => Promise<T>;

class EngineTimeout extends Error {}

export function createEngineCall(options: { timeoutMs: number; logger: Logger; isOpen: (kind: ResourceKind, id: string) => boolean }): EngineCall {
  const { timeoutMs, logger, isOpen } = options;
  return async function engine<T>(operation: string, call: () => Promise<T>, needs: Needs = []): Promise<T> {
    const pending = (async () => call())();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new EngineTimeout()), timeoutMs);
    });
    try {
      return await Promise.race([pending, deadline]);
    } catch (error) {
      const gone = needs.find(([kind, id]) => !isOpen(kind, id));
      if (error instanceof EngineTimeout) {
        // Whatever the engine makes of this call later is not wanted any more.
        pending.then(closeLate, () => {});
        logger.error({ operation, timeoutMs }, 'media engine did not answer in time');
        if (gone) throw notFound(...gone);
        throw new RelayError('MEDIASOUP_ERROR', `media engine did not answer in time: ${operation}`);
      }
      if (gone) throw notFound(...gone);
      const mapped = fromEngineError(error, operation);
      if (mapped.code === 'MEDIASOUP_ERROR') logger.error({ err: error, operation }, 'media engine call failed');
      throw mapped;
    } finally {
      clearTimeout(timer);
    }
  };
}

/** A resource the engine created but the registry could not take is closed, never left half-created. */
export function adopt<R extends { close(): void }, T>(resource: R, register: () => T): T {
  try {
    return register();
  } catch (error) {
    resource.close();
    throw error;
  }
}

/** Closes a resource the engine created after its request had already failed for lateness. */
function closeLate(late: unknown): void {
  const resource = late as { close?: () => void; closed?: boolean } | undefined;
  if (resource && typeof resource.close === 'function' && resource.closed !== true) resource.close();
}
