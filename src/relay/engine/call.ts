// Every call into the engine goes through here: a deadline, late results closed, the engine's message
// logged and mapped, NOT_FOUND when a resource the call needed went away meanwhile, and MEDIASOUP_ERROR
// (never NOT_FOUND) when it went away because its worker died during the call.
import type { types as ms } from 'mediasoup';
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
 * Runs `call` under the deadline and maps its failure. `worker` is the worker the call runs on; by
 * default the worker of the first need.
 * @example const transport = await engine('create transport', () => router.createWebRtcTransport(o), [['router', routerId]])
 */
export type EngineCall = <T>(operation: string, call: () => Promise<T>, needs?: Needs, worker?: ms.Worker) => Promise<T>;

/** An engine call under way: what it does and for which HTTP request. */
export interface InFlightCall {
  operation: string;
  requestId: string | undefined;
}

export interface EngineCallOptions {
  timeoutMs: number;
  logger: Logger;
  isOpen: (kind: ResourceKind, id: string) => boolean;
  /** The worker a resource lives on, while it is open. */
  workerOf: (kind: ResourceKind, id: string) => ms.Worker | undefined;
}

export interface EngineCaller {
  /** Engine calls made for no HTTP request (start-up, reconciliation, tests calling the service). */
  engine: EngineCall;
  /** Engine calls made for the HTTP request `requestId`: its failures and a worker's death name it. */
  engineFor(this: void, requestId: string | undefined): EngineCall;
  /** The calls under way on `worker`, for the log line of its death. */
  inFlightOn(this: void, worker: ms.Worker): InFlightCall[];
}

class EngineTimeout extends Error {}

export function createEngineCall(options: EngineCallOptions): EngineCaller {
  const { timeoutMs, logger, isOpen, workerOf } = options;
  // Weak: a worker's set lives as long as the worker object, without a delete when it empties (and a
  // new Set on the next call, as often as every call).
  const inFlight = new WeakMap<ms.Worker, Set<InFlightCall>>();

  async function run<T>(requestId: string | undefined, operation: string, call: () => Promise<T>, needs: Needs = [], on?: ms.Worker): Promise<T> {
    const worker = on ?? (needs[0] ? workerOf(...needs[0]) : undefined);
    const tracked: InFlightCall = { operation, requestId };
    if (worker) {
      let calls = inFlight.get(worker);
      if (!calls) inFlight.set(worker, (calls = new Set()));
      calls.add(tracked);
    }
    // A call that throws at once fails like one that rejects.
    let pending: Promise<T>;
    try {
      pending = Promise.resolve(call());
    } catch (error) {
      pending = Promise.reject(error);
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      // One promise settled by whichever comes first, the answer or the call's own deadline timer.
      return await new Promise<T>((resolve, reject) => {
        timer = setTimeout(() => reject(new EngineTimeout()), timeoutMs);
        pending.then(resolve, reject);
      });
    } catch (error) {
      if (worker?.died) {
        // The resource is gone because its worker is: that is the engine failing, not the caller's 404.
        pending.then(closeLate, () => {});
        logger.error({ operation, requestId, workerPid: worker.pid }, 'media worker died during an engine call');
        throw workerDied(operation, worker);
      }
      const gone = needs.find(([kind, id]) => !isOpen(kind, id));
      if (error instanceof EngineTimeout) {
        // Whatever the engine makes of this call later is not wanted any more.
        pending.then(closeLate, () => {});
        logger.error({ operation, requestId, timeoutMs }, 'media engine did not answer in time');
        if (gone) throw notFound(...gone);
        throw new RelayError('MEDIASOUP_ERROR', `media engine did not answer in time: ${operation}`);
      }
      if (gone) throw notFound(...gone);
      const mapped = fromEngineError(error, operation);
      if (mapped.code === 'MEDIASOUP_ERROR') logger.error({ err: error, operation, requestId }, 'media engine call failed');
      throw mapped;
    } finally {
      clearTimeout(timer);
      if (worker) {
        inFlight.get(worker)?.delete(tracked);
      }
    }
  }

  const engineFor = (requestId: string | undefined): EngineCall => (operation, call, needs, on) => run(requestId, operation, call, needs, on);
  return { engine: engineFor(undefined), engineFor, inFlightOn: (worker) => [...(inFlight.get(worker) ?? [])] };
}

/** The MEDIASOUP_ERROR of a request whose worker died under it. */
export function workerDied(operation: string, worker: ms.Worker): RelayError {
  return new RelayError('MEDIASOUP_ERROR', `media worker died during the request: ${operation}`, { workerPid: worker.pid });
}

/**
 * The answer when a resource a request needs is gone after its engine call: MEDIASOUP_ERROR when its
 * worker died meanwhile, NOT_FOUND when something (an API close, a cascade) closed it.
 */
export function goneError(kind: ResourceKind, id: string, worker: ms.Worker, operation: string): RelayError {
  return worker.died ? workerDied(operation, worker) : notFound(kind, id);
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
