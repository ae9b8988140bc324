// Routers: one per room, placed on the least-loaded live worker.
import type { types as ms } from 'mediasoup';
import { adopt } from '../engine/call.js';
import { DEFAULT_MEDIA_CODECS } from '../engine/codecs.js';
import { RelayError } from '../errors.js';
import type { CreateRouterBody } from '../http/schemas.js';
import type { OpsDeps } from './deps.js';
import { startSpeakerDetection } from './speakers.js';

export async function createRouter(deps: OpsDeps, input: CreateRouterBody): Promise<ms.Router> {
  const { config, logger, registry, placement, engine } = deps;
  const pending = placement.pending();
  const open = registry.count('router');
  if (open + pending >= config.maxRouters) {
    logger.warn({ maxRouters: config.maxRouters, open, pending }, 'router limit reached; router refused');
    throw new RelayError('ROUTER_LIMIT_EXCEEDED', `router limit reached: ${config.maxRouters}`, { maxRouters: config.maxRouters });
  }
  const slot = placement.place();
  const worker = slot.worker!;
  const router = await placement.reserve(slot, () =>
    engine('create router', () =>
      worker.createRouter({
        // The engine normalises codecs in place: the shared defaults get a copy.
        mediaCodecs: (input.mediaCodecs ?? structuredClone(DEFAULT_MEDIA_CODECS)) as ms.RtpCodecCapability[],
        ...(input.appData ? { appData: input.appData } : {}),
      }),
    ),
  );
  const entry = adopt(router, () => {
    if (router.closed || slot.worker !== worker) throw new RelayError('MEDIASOUP_ERROR', 'media worker died while creating the router');
    return registry.add('router', { router, worker, slot: slot.index });
  });
  // A room whose speaker detection could not start is closed, never left half-made.
  if (input.speakerDetection) await startSpeakerDetection(deps, entry, input.speakerDetection).catch(closeAndThrow(router));
  return router;
}

function closeAndThrow(resource: { close(): void }) {
  return (error: unknown): never => {
    resource.close();
    throw error;
  };
}

export function closeRouter(deps: OpsDeps, id: string): void {
  const { router } = deps.registry.require('router', id);
  // mediasoup 3.11's WebRtcServer forgets a transport only on transport.close(), not when its
  // router closes it: close the router's transports first, or the server's map grows for ever.
  for (const entry of deps.registry.children('router', id, 'transport')) entry.transport.close();
  router.close();
}
