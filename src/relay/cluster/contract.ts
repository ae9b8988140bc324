// GET /internal/v1/cluster: the nodes this relay knows, their load, and whether Redis answers.
import { z } from 'zod';
import { timeString } from '../contract/common.js';
import { notFoundRow } from '../contract/errors.js';
import { relayRoute } from '../contract/route.js';

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
