// The relay as a whole: its figures (GET /internal/info) and its drain.
import { z } from 'zod';
import { timeString } from './common.js';
import { KIND_PLURALS } from '../kinds/index.js';
import type { KindPlural } from '../registry/kinds.js';
import { relayRoute } from './route.js';

const countsSchema = () => z.strictObject(Object.fromEntries(KIND_PLURALS.map((plural) => [plural, z.int()])) as Record<KindPlural, z.ZodInt>);

/**
 * GET /internal/info's answer. Strict objects: a field the endpoint returns but this schema omits
 * fails the test that checks answers against it, so the OpenAPI document generated from it cannot drift.
 */
export const infoSchema = z.strictObject({
  version: z.string(),
  started_at: timeString,
  uptime_s: z.int(),
  draining: z.boolean().describe('true once a drain has begun (SIGTERM or POST /internal/v1/drain): new routers are refused with DRAINING'),
  workers: z.array(
    z.strictObject({
      pid: z.int().nullable().describe('of the live worker, or of the last one while its slot waits for a restart'),
      alive: z.boolean(),
      restarts: z.int(),
      deaths: z.int(),
      routers: z.int(),
      port: z.int(),
      lastRestartDelayMs: z.int().nullable().describe('delay of the restart scheduled last; null before the first death'),
      counts: countsSchema().describe("what the live worker holds (all 0 while the slot waits for a restart): a placement's load figures"),
      cpuMs: z
        .number()
        .nullable()
        .describe("CPU time (user + system, ms) the live worker has used, from mediasoup's getResourceUsage; null while the slot waits for a restart"),
    }),
  ),
  counts: countsSchema(),
  limits: z.strictObject({
    maxRouters: z.int(),
    maxTransportsPerRouter: z.int(),
    maxProducersPerRouter: z.int(),
    maxConsumersPerRouter: z.int(),
    rtcMinPort: z.int(),
    rtcMaxPort: z.int(),
  }),
  largestRouter: z.strictObject({ transports: z.int(), producers: z.int(), consumers: z.int() }).describe('the most of each kind any one router holds'),
  rate_limits: z
    .strictObject({ store: z.enum(['memory', 'redis', 'memory-fallback']) })
    .describe('where the account API rate limits count: memory (no REDIS_URL), redis (shared), memory-fallback (Redis failing)'),
  events: z.strictObject({
    lastId: z.string().describe('id of the last event published (resume point of a new stream)'),
    buffered: z.int().describe('events held for replay'),
    streams: z.int().describe('event streams open now'),
    webhook: z.looseObject({ enabled: z.boolean() }).describe('delivery figures when EVENTS_WEBHOOK_URL is set'),
  }),
  cluster: z
    .strictObject({ enabled: z.boolean(), nodeId: z.string().nullable(), degraded: z.boolean(), nodes: z.int() })
    .describe('this relay as a node of the cluster (CLUSTER_NODE_URL): degraded while Redis does not answer; nodes it knows, itself included (GET /internal/v1/cluster)'),
});

export type RelayInfo = z.infer<typeof infoSchema>;

export const drainSchema = z.strictObject({
  draining: z.literal(true),
  routers: z.int().describe('routers still open'),
});

export const getInfo = relayRoute({
  method: 'get',
  path: '/info',
  summary: 'Workers, resource counts and limits',
  success: { 200: { description: 'service information', schema: infoSchema } },
  errors: [],
});

export const drain = relayRoute({
  method: 'post',
  path: '/v1/drain',
  summary: 'Start a drain: new routers are refused with DRAINING, open rooms go on (the process does not exit)',
  success: {
    202: { description: 'drain started', schema: drainSchema },
    200: { description: 'a drain was already under way (the same body)', schema: drainSchema },
  },
  errors: [],
});
