// The relay cluster (src/relay/cluster/): relays that share one Redis know each other as nodes.
import { hostname } from 'node:os';
import { z } from 'zod';
import { optionalString } from './env.js';

/** A node's id: what Fly.io's machine ids and host names look like, bounded. */
const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The base URL at which the other nodes reach this node's internal listener: scheme, host, port; nothing else. */
const nodeUrl = z
  .url({ protocol: /^https?$/ })
  .max(256)
  .refine((value) => {
    const url = new URL(value);
    return url.username === '' && url.password === '' && (url.pathname === '/' || url.pathname === '') && url.search === '' && url.hash === '';
  }, 'must be scheme, host and port only (e.g. http://<machine id>.vm.<app>.internal:3001): no path, query, fragment or credentials')
  .transform((value) => new URL(value).origin);

export const clusterVariables = {
  CLUSTER_NODE_URL: optionalString.pipe(nodeUrl.optional()),
  CLUSTER_NODE_ID: optionalString.pipe(z.string().regex(NODE_ID, 'must be 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit').optional()),
  CLUSTER_REGION: optionalString.pipe(z.string().regex(/^[a-z0-9-]{1,32}$/, 'must be 1-32 lowercase letters, digits or dashes (e.g. ams)').optional()),
  // Unset: this node's rooms stay on it (as a single relay's); set: past it, their new transports go to other nodes.
  CLUSTER_NODE_MAX_CONSUMERS: optionalString.pipe(z.string().regex(/^\d{1,7}$/, 'must be a whole number of consumers, 0-1000000').transform(Number).refine((n) => n <= 1_000_000, 'must be at most 1000000').optional()),
  // Fly.io sets these on every machine: the defaults of the two above.
  FLY_MACHINE_ID: optionalString,
  FLY_REGION: optionalString,
};

/** The host name as a node id: its first label when the whole name is too long or has other characters. */
function hostNodeId(): string {
  const name = hostname();
  if (NODE_ID.test(name)) return name;
  const label = name.split('.')[0]?.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 64) ?? '';
  return NODE_ID.test(label) ? label : 'node';
}

// REDIS_URL belongs to the accounts slice (the shared rate limits); read here because a node needs it.
export const clusterConfig = z
  .object({ REDIS_URL: optionalString, MEDIASOUP_PIPE_LISTEN_IP: optionalString, ...clusterVariables })
  .superRefine((env, ctx) => {
    if (env.CLUSTER_NODE_URL && !env.REDIS_URL) {
      ctx.addIssue({ code: 'custom', path: ['CLUSTER_NODE_URL'], message: 'needs REDIS_URL: the nodes of a cluster find each other in Redis' });
    }
    if (env.CLUSTER_NODE_MAX_CONSUMERS !== undefined && !env.MEDIASOUP_PIPE_LISTEN_IP) {
      ctx.addIssue({ code: 'custom', path: ['CLUSTER_NODE_MAX_CONSUMERS'], message: "needs MEDIASOUP_PIPE_LISTEN_IP: a room's media crosses between nodes over pipe transports" });
    }
    const flyId = env.FLY_MACHINE_ID;
    if (env.CLUSTER_NODE_URL && !env.CLUSTER_NODE_ID && flyId !== undefined && !NODE_ID.test(flyId)) {
      ctx.addIssue({ code: 'custom', path: ['FLY_MACHINE_ID'], message: 'is not a usable node id; set CLUSTER_NODE_ID' });
    }
  })
  .transform((env) => ({
    /** Undefined unless CLUSTER_NODE_URL (and REDIS_URL) are set: then the relay is a single node. */
    cluster:
      env.CLUSTER_NODE_URL && env.REDIS_URL
        ? {
            nodeId: env.CLUSTER_NODE_ID ?? env.FLY_MACHINE_ID ?? hostNodeId(),
            nodeUrl: env.CLUSTER_NODE_URL,
            region: env.CLUSTER_REGION ?? (env.FLY_REGION && /^[a-z0-9-]{1,32}$/.test(env.FLY_REGION) ? env.FLY_REGION : undefined),
            redisUrl: env.REDIS_URL,
            /** Consumers on this node past which its rooms' new transports go to other nodes; undefined: never. */
            maxConsumers: env.CLUSTER_NODE_MAX_CONSUMERS,
          }
        : undefined,
  }));
