// Consumers on a recv transport: create (always paused), resume, close (pause, layers, priority,
// key frames and stats are controls.ts).
import { z } from 'zod';
import { appDataSchema } from '../../contract/bounds.js';
import { id, mediaKind } from '../../contract/common.js';
import { capacityRow, errorRow, notFoundRow, VALIDATION } from '../../contract/errors.js';
import { relayRoute } from '../../contract/route.js';
import { rtpCapabilitiesSchema, rtpParametersView } from '../../contract/rtp.js';

export const createConsumerBody = z.object({
  transportId: id,
  producerId: id,
  rtpCapabilities: rtpCapabilitiesSchema,
  appData: appDataSchema.optional(),
});

export type CreateConsumerBody = z.infer<typeof createConsumerBody>;

export const consumerSchema = z.object({
  id: z.string(),
  transportId: z.string(),
  producerId: z.string(),
  kind: mediaKind,
  type: z.string(),
  rtpParameters: rtpParametersView,
  paused: z.boolean().describe('true: a consumer is created paused'),
  producerPaused: z.boolean(),
});

/** A consumer's state after a pause or resume. */
export const consumerStateSchema = z.object({ id: z.string(), paused: z.boolean(), producerPaused: z.boolean() });

export const createConsumer = relayRoute({
  method: 'post',
  path: '/v1/consumers',
  summary: 'Create a consumer on a recv transport; always created paused',
  body: createConsumerBody,
  success: { 201: { description: 'the consumer (paused)', schema: consumerSchema } },
  errors: [
    VALIDATION,
    notFoundRow('transport or producer'),
    errorRow('CONFLICT', 'the transport is a send transport (details {transportId, direction}), or a WHEP session\'s (details {transportId})'),
    errorRow('CAN_NOT_CONSUME'),
    capacityRow('consumers'),
  ],
});

export const resumeConsumer = relayRoute({
  method: 'post',
  path: '/v1/consumers/{id}/resume',
  summary: 'Resume a consumer',
  success: { 200: { description: 'resumed (paused: false)', schema: consumerStateSchema } },
  errors: [notFoundRow('consumer')],
});

export const closeConsumer = relayRoute({
  method: 'delete',
  path: '/v1/consumers/{id}',
  summary: 'Close a consumer',
  success: { 204: { description: 'closed', schema: null } },
  errors: [notFoundRow('consumer')],
});
