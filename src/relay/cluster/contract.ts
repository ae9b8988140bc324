// GET /internal/v1/cluster: the nodes this relay knows, their load, and whether Redis answers.
import { z } from 'zod';
import { timeString } from '../contract/common.js';
import { errorRow, notFoundRow, VALIDATION } from '../contract/errors.js';
import { relayRoute } from '../contract/route.js';
import { mediaCodecsSchema } from '../contract/rtp.js';
import { DATA_BOUNDS } from '../kinds/data/contract.js';

const nodeSchema = z.strictObject({
  id: z.string().describe('CLUSTER_NODE_ID (on Fly.io the machine id)'),
  self: z.boolean().describe('true for the node that answered'),
  url: z.string().describe("base URL of the node's internal listener (CLUSTER_NODE_URL)"),
  region: z.string().nullable(),
  pipeAddress: z.string().nullable().describe('the address its pipe transports announce; null: it opens none'),
  load: z.strictObject({
    routers: z.int(),
    transports: z.int(),
    consumers: z.int(),
    workerCpuMs: z.number().describe('CPU time (user + system, ms) its live workers have used'),
    draining: z.boolean(),
    maxConsumers: z.int().optional().describe('its CLUSTER_NODE_MAX_CONSUMERS: past it, its rooms take new transports on other nodes (absent: never)'),
  }),
  heartbeatAt: timeString.describe('when the node last wrote its record'),
  heartbeatAgeMs: z.int().describe('how long ago, by the answering node\'s clock'),
});

export const clusterSchema = z.strictObject({
  enabled: z.boolean().describe('false without CLUSTER_NODE_URL: the relay is a single node (nodes is empty)'),
  nodeId: z.string().nullable(),
  degraded: z.boolean().describe('true while Redis does not answer: nodes are the ones last known, new rooms stay local'),
  nodes: z.array(nodeSchema).describe('live nodes, the answering one first, then by id'),
});

export type ClusterAnswer = z.infer<typeof clusterSchema>;

export const getCluster = relayRoute({
  method: 'get',
  path: '/v1/cluster',
  summary: 'The relay nodes sharing this Redis, their load, and whether Redis answers',
  success: { 200: { description: 'the cluster as this node knows it', schema: clusterSchema } },
  errors: [],
});

export const locatedSchema = z.strictObject({
  nodeId: z.string().nullable().describe('the node that holds it: the one answering (null: the relay is not a cluster node)'),
  kind: z.string().describe('what the id names (router, transport, producer, …, recording)'),
});

/** Node to node: whether the answering node holds a resource (asked of every node when a call names an id no node cached). */
export const locateResource = relayRoute({
  method: 'get',
  path: '/v1/cluster/resources/{id}',
  summary: 'Whether this node holds the resource: asked by the other nodes of the cluster to find where a call goes',
  success: { 200: { description: 'this node holds it', schema: locatedSchema } },
  errors: [notFoundRow('resource (on this node)')],
});

// Node to node, for the rooms that span nodes (span.ts): a part of a room made or closed on the node
// asked, and a producer of that node piped to the asking node (its copy there keeps the producer's id).

const srtpSchema = z.strictObject({ cryptoSuite: z.string().max(64), keyBase64: z.string().max(256) });

export const ensurePartBody = z.strictObject({
  nodeId: z.string().max(64).describe("the room's origin node"),
  mediaCodecs: mediaCodecsSchema.describe("the room's codecs, as its first router was made with"),
  speakers: z.boolean().optional().describe("the room detects speakers (speakerDetection): the part's audio producers join the origin's observers"),
});

export const joinSpeakersBody = z.strictObject({
  producerId: z.string().max(128).describe("an audio producer of the asking node's part of the room"),
});
export type JoinSpeakersBody = z.infer<typeof joinSpeakersBody>;
export type EnsurePartBody = z.infer<typeof ensurePartBody>;

export const openPipeBody = z.strictObject({
  roomId: z.string().max(128),
  producerId: z.string().max(128).describe('the producer or data producer to pipe'),
  kind: z.enum(['producer', 'dataProducer']).optional().describe('what producerId names (absent: a producer)'),
  nodeId: z.string().max(64).describe('the asking node: told of the pipe\'s pause, resume and close'),
  ip: z.string().max(64).describe("the asking node's pipe transport (checked as a pipe transport's connect is)"),
  port: z.int().min(1).max(65_535),
  srtpParameters: srtpSchema,
});
export type OpenPipeBody = z.infer<typeof openPipeBody>;

const pipeEnd = {
  pipeId: z.string().max(128),
  ip: z.string().max(64),
  port: z.int().min(1).max(65_535),
  srtpParameters: srtpSchema,
};

export const openedPipeSchema = z.union([
  z.object({
    ...pipeEnd,
    kind: z.enum(['audio', 'video']),
    rtpParameters: z.record(z.string(), z.unknown()),
    paused: z.boolean(),
    appData: z.record(z.string(), z.unknown()).optional().describe("the producer's appData, which the copy keeps (speaker events name it)"),
  }),
  z.object({
    ...pipeEnd,
    kind: z.literal('data'),
    sctpStreamParameters: z.object({ streamId: z.int().min(0).max(65_535), ordered: z.boolean().optional(), maxPacketLifeTime: z.int().min(0).optional(), maxRetransmits: z.int().min(0).optional() }),
    label: z.string().max(DATA_BOUNDS.label),
    protocol: z.string().max(DATA_BOUNDS.protocol),
  }),
]);

export const pipeStateBody = z.strictObject({ paused: z.boolean().optional(), closed: z.literal(true).optional() });
export type PipeStateBody = z.infer<typeof pipeStateBody>;

const notSpanning = errorRow('CONFLICT', 'this node takes no part of rooms of other nodes (not a cluster node)');

export const ensureRoomPart = relayRoute({
  method: 'post',
  path: '/v1/cluster/rooms/{id}',
  summary: "Node to node: make this node's part of another node's room (once), with the room's codecs",
  body: ensurePartBody,
  success: { 204: { description: 'the part exists', schema: null } },
  errors: [VALIDATION, notSpanning, errorRow('DRAINING'), errorRow('ROUTER_LIMIT_EXCEEDED', 'a part counts as one of the node\'s MEDIASOUP_MAX_ROUTERS'), errorRow('MEDIASOUP_ERROR')],
});

export const closeRoomPart = relayRoute({
  method: 'delete',
  path: '/v1/cluster/rooms/{id}',
  summary: "Node to node: close this node's part of another node's room (the room closed)",
  success: { 204: { description: 'closed', schema: null } },
  errors: [notFoundRow('router (part)'), notSpanning],
});

export const joinRoomSpeakers = relayRoute({
  method: 'post',
  path: '/v1/cluster/rooms/{id}/speakers',
  summary: "Node to node: an audio producer of the asking node's part joins the room's speaker observers (its copy piped here)",
  body: joinSpeakersBody,
  success: { 204: { description: 'the producer is observed (or the room detects no speakers)', schema: null } },
  errors: [VALIDATION, notFoundRow('router or producer'), notSpanning, errorRow('MEDIASOUP_ERROR')],
});

export const openPipe = relayRoute({
  method: 'post',
  path: '/v1/cluster/pipes',
  summary: "Node to node: pipe a producer (SRTP) or data producer (SCTP) of this node to the asking node's pipe transport",
  body: openPipeBody,
  success: { 201: { description: 'the pipe: connect to ip and port, and produce the copy with kind, rtpParameters and paused (data: sctpStreamParameters, label, protocol)', schema: openedPipeSchema } },
  errors: [VALIDATION, notFoundRow('producer or data producer'), notSpanning, errorRow('CAN_NOT_CONSUME'), errorRow('MEDIASOUP_ERROR')],
});

export const closePipe = relayRoute({
  method: 'delete',
  path: '/v1/cluster/pipes/{id}',
  summary: 'Node to node: the copy this pipe fed closed; close the pipe',
  success: { 204: { description: 'closed', schema: null } },
  errors: [notFoundRow('resource (pipe)'), notSpanning],
});

export const pipeState = relayRoute({
  method: 'post',
  path: '/v1/cluster/pipes/{id}/state',
  summary: 'Node to node: the piped producer paused, resumed or closed on its node',
  body: pipeStateBody,
  success: { 204: { description: 'the copy follows', schema: null } },
  errors: [VALIDATION, notFoundRow('resource (pipe)'), notSpanning],
});
