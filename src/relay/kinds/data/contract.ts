// Data producers and data consumers (SCTP data channels relayed through a router): create, close.
import { z } from 'zod';
import { appDataSchema } from '../../contract/bounds.js';
import { id, int } from '../../contract/common.js';
import { errorRow, notFoundRow, VALIDATION, type ErrorRow } from '../../contract/errors.js';
import { relayRoute } from '../../contract/route.js';

export const DATA_BOUNDS = {
  /**
   * SCTP stream ids a client may send on: a transport is created with numSctpStreams OS = MIS = 1024
   * (ops/transports.ts), so incoming streams are 0-1023.
   */
  streamId: { min: 0, max: 1023 },
  /**
   * RFC 8831 §6.6 / W3C RTCDataChannelInit: unsigned 16-bit values (`[EnforceRange] unsigned short`),
   * 0 included: `{ordered: false, maxRetransmits: 0}` is the usual unreliable channel, what
   * RTCDataChannel reports and mediasoup-client sends. mediasoup accepts 0 (and null, "not set");
   * its 3.11 worker reads 0 as "not set", so on the relay's own sending leg such a stream is
   * unordered but retransmitted (docs/media-relay.md, "Data channels").
   */
  maxPacketLifeTime: { min: 0, max: 65_535 },
  maxRetransmits: { min: 0, max: 65_535 },
  /**
   * Label and protocol: RFC 8832 allows 65535 bytes each, W3C RTCDataChannel refuses more than 65535;
   * apps use short names ("chat", "reactions"). 1024 characters keep the relay's memory per channel small.
   */
  label: 1024,
  protocol: 1024,
} as const;


/** null (what RTCDataChannel reports for the one not set) means not set, as leaving it out does. */
const optionalLimit = (range: { min: number; max: number }) =>
  int(range)
    .nullable()
    .optional()
    .transform((v) => v ?? undefined);

/**
 * SCTP stream of a data producer (what the client's RTCDataChannel uses). Reliable and ordered by
 * default; maxPacketLifeTime and maxRetransmits make it partially reliable, one or the other. The
 * rules are mediasoup's (and browsers never send more): a value counts as set when above 0, so
 * `{ordered: true, maxRetransmits: 0}` (mediasoup-client's produceData({maxRetransmits: 0})) passes.
 */
export const sctpStreamParametersSchema = z
  .object({
    streamId: int(DATA_BOUNDS.streamId),
    ordered: z.boolean().optional(),
    maxPacketLifeTime: optionalLimit(DATA_BOUNDS.maxPacketLifeTime),
    maxRetransmits: optionalLimit(DATA_BOUNDS.maxRetransmits),
  })
  .refine((p) => !(p.maxPacketLifeTime && p.maxRetransmits), {
    message: 'maxPacketLifeTime and maxRetransmits are mutually exclusive',
  })
  .refine((p) => p.ordered !== true || !(p.maxPacketLifeTime || p.maxRetransmits), {
    message: 'an ordered stream cannot have maxPacketLifeTime or maxRetransmits',
  });

export const createDataProducerBody = z.object({
  transportId: id,
  sctpStreamParameters: sctpStreamParametersSchema.optional(),
  label: z.string().max(DATA_BOUNDS.label).optional(),
  protocol: z.string().max(DATA_BOUNDS.protocol).optional(),
  appData: appDataSchema.optional(),
});

export const createDataConsumerBody = z.object({
  transportId: id,
  dataProducerId: id,
  appData: appDataSchema.optional(),
});

export type CreateDataProducerBody = z.infer<typeof createDataProducerBody>;
export type CreateDataConsumerBody = z.infer<typeof createDataConsumerBody>;

const sctpStreamParametersView = z
  .object({ streamId: z.int(), ordered: z.boolean(), maxPacketLifeTime: z.int().optional(), maxRetransmits: z.int().optional() })
  .nullable();

export const dataProducerSchema = z.object({
  id: z.string(),
  transportId: z.string(),
  sctpStreamParameters: sctpStreamParametersView,
  label: z.string(),
  protocol: z.string(),
});

export const dataConsumerSchema = z.object({
  id: z.string(),
  transportId: z.string(),
  dataProducerId: z.string(),
  sctpStreamParameters: sctpStreamParametersView,
  label: z.string(),
  protocol: z.string(),
});

const transportConflict: ErrorRow = errorRow(
  'CONFLICT',
  'wrong transport direction, transport without enableSctp, the transport holds MEDIASOUP_MAX_DATA_CHANNELS_PER_TRANSPORT data producers and consumers, or (data producers) the stream id is taken; details {transportId, …}',
);

export const createDataProducer = relayRoute({
  method: 'post',
  path: '/v1/data-producers',
  summary: 'Create a data producer (an SCTP data channel the client sends on) on a send transport created with enableSctp',
  body: createDataProducerBody,
  success: { 201: { description: 'the data producer; without sctpStreamParameters it takes the lowest free stream id, reliable and ordered', schema: dataProducerSchema } },
  errors: [VALIDATION, notFoundRow('transport'), transportConflict],
});

export const closeDataProducer = relayRoute({
  method: 'delete',
  path: '/v1/data-producers/{id}',
  summary: 'Close a data producer (its data consumers close with it)',
  success: { 204: { description: 'closed', schema: null } },
  errors: [notFoundRow('dataProducer')],
});

export const createDataConsumer = relayRoute({
  method: 'post',
  path: '/v1/data-consumers',
  summary: 'Create a data consumer of a data producer on a recv transport created with enableSctp',
  body: createDataConsumerBody,
  success: { 201: { description: 'the data consumer: the client opens a channel with this stream id, label and protocol', schema: dataConsumerSchema } },
  errors: [VALIDATION, notFoundRow('transport or dataProducer'), transportConflict, errorRow('CAN_NOT_CONSUME', 'the data producer belongs to another router')],
});

export const closeDataConsumer = relayRoute({
  method: 'delete',
  path: '/v1/data-consumers/{id}',
  summary: 'Close a data consumer',
  success: { 204: { description: 'closed', schema: null } },
  errors: [notFoundRow('dataConsumer')],
});
