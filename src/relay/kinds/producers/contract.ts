// Producers on a send transport: create, close (pause, resume and stats are controls.ts).
import { z } from 'zod';
import { appDataSchema } from '../../contract/bounds.js';
import { id, mediaKind } from '../../contract/common.js';
import { capacityRow, errorRow, notFoundRow, VALIDATION } from '../../contract/errors.js';
import { relayRoute } from '../../contract/route.js';
import { rtpParametersSchema } from '../../contract/rtp.js';

export const createProducerBody = z.object({
  transportId: id,
  kind: mediaKind,
  rtpParameters: rtpParametersSchema,
  paused: z.boolean().optional(),
  appData: appDataSchema.optional(),
});

export type CreateProducerBody = z.infer<typeof createProducerBody>;

export const producerSchema = z.object({ id: z.string(), transportId: z.string(), kind: mediaKind, type: z.string(), paused: z.boolean() });

export const createProducer = relayRoute({
  method: 'post',
  path: '/v1/producers',
  summary: 'Create a producer on a send transport',
  body: createProducerBody,
  success: { 201: { description: 'the producer', schema: producerSchema } },
  errors: [VALIDATION, notFoundRow('transport'), errorRow('CONFLICT', 'the transport is a recv transport; details {transportId, direction}'), capacityRow('producers')],
});

export const closeProducer = relayRoute({
  method: 'delete',
  path: '/v1/producers/{id}',
  summary: 'Close a producer (its consumers close with it)',
  success: { 204: { description: 'closed', schema: null } },
  errors: [notFoundRow('producer')],
});
