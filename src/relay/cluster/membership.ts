// A relay node's membership of the cluster: its record in Redis, refreshed every heartbeat with a short
// expiry, and the records of the other nodes as last read. A node that stops refreshing (killed, cut
// off) drops out when its record expires; one that stops cleanly removes its record at once.
//
// Redis is never on a call's path: a call reads the view held in memory. While Redis fails, the node
// keeps the last view it read (it goes on knowing the nodes it knew), says `degraded`, and tries again
// every heartbeat; the first heartbeat that succeeds registers it again and heals the view.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { z } from 'zod';
import type { Logger } from '../../logger.js';

/** What a node tells the others of its load, refreshed every heartbeat. */
export interface NodeLoad {
  routers: number;
  transports: number;
  consumers: number;
  /** CPU time (user + system, ms) its live workers have used. */
  workerCpuMs: number;
  draining: boolean;
}

/** A node as the cluster knows it. */
export interface NodeRecord {
  id: string;
  /** Base URL of its internal listener (CLUSTER_NODE_URL). */
  url: string;
  region: string | null;
  /** The address its pipe transports announce (MEDIASOUP_PIPE_ANNOUNCED_IP or _LISTEN_IP); null: no cascading. */
  pipeAddress: string | null;
  load: NodeLoad;
  /** When the node wrote this record (ISO 8601). */
  heartbeatAt: string;
  /** Which process wrote it: two processes under one id is a misconfiguration, logged. */
  instance: string;
}

export interface ClusterView {
  nodeId: string;
  /** True while Redis fails: the nodes are the last ones read, this node's record may have expired there. */
  degraded: boolean;
  /** Live nodes, this one first, then by id. */
  nodes: NodeRecord[];
}

export interface MembershipOptions {
  self: { id: string; url: string; region?: string | undefined; pipeAddress?: string | undefined };
  redisUrl: string;
  /** This node's load now (called once a heartbeat). */
  load: () => Promise<NodeLoad>;
  logger: Logger;
  /** Told of each change of `degraded` (for the metric). */
  onDegraded?: (degraded: boolean) => void;
  heartbeatMs?: number;
  /** How long a record outlives its last heartbeat. */
  ttlMs?: number;
  /** Prefix of the cluster's keys; distinct clusters sharing one Redis need distinct prefixes. */
  prefix?: string;
}

export const DEFAULT_HEARTBEAT_MS = 1_000;
export const DEFAULT_TTL_MS = 3_000;
/** Records read at most: a bound on what a corrupted or hostile Redis can make a node hold. */
export const MAX_NODES = 1_000;
/** A Redis command's longest wait: a heartbeat never hangs on a Redis that holds the connection but does not answer. */
const COMMAND_TIMEOUT_MS = 1_000;

const recordSchema = z.strictObject({
  id: z.string().max(64),
  url: z.string().max(256),
  region: z.string().max(32).nullable(),
  pipeAddress: z.string().max(256).nullable(),
  load: z.strictObject({
    routers: z.int().min(0),
    transports: z.int().min(0),
    consumers: z.int().min(0),
    workerCpuMs: z.number().min(0),
    draining: z.boolean(),
  }),
  heartbeatAt: z.string().max(40),
  instance: z.string().max(64),
});

/**
 * @example
 * const membership = createMembership({ self: { id, url }, redisUrl, load, logger })
 * await membership.start(); …; membership.view().nodes
 */
export function createMembership(options: MembershipOptions) {
  const { self, logger } = options;
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  const prefix = options.prefix ?? 'cluster:';
  const membersKey = `${prefix}nodes`;
  const nodeKey = (id: string) => `${prefix}node:${id}`;
  const instance = randomUUID();
  const redis = new Redis(options.redisUrl, {
    lazyConnect: true,
    // A command fails at once while the connection is down, instead of waiting in a queue.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: () => Math.min(heartbeatMs, 1_000),
  });
  // ioredis reports connection errors as events; the heartbeat's failures are what count.
  redis.on('error', () => {});

  let others: NodeRecord[] = [];
  let current: NodeRecord | undefined;
  let degraded = false;
  let sharedIdLogged = false;
  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<void> | undefined;
  let stopped = false;

  function setDegraded(value: boolean, err?: unknown): void {
    if (value === degraded) return;
    degraded = value;
    if (value) logger.warn({ err, nodeId: self.id }, 'cluster: Redis unreachable; serving with the nodes last known');
    else logger.info({ nodeId: self.id, nodes: others.length + 1 }, 'cluster: Redis reachable again; this node is registered');
    options.onDegraded?.(value);
  }

  async function beat(): Promise<void> {
    const record: NodeRecord = {
      id: self.id,
      url: self.url,
      region: self.region ?? null,
      pipeAddress: self.pipeAddress ?? null,
      load: await options.load(),
      heartbeatAt: new Date().toISOString(),
      instance,
    };
    current = record;
    try {
      if (redis.status === 'wait' || redis.status === 'end') await redis.connect();
      const [previous] = (await redis.multi().set(nodeKey(self.id), JSON.stringify(record), 'PX', ttlMs, 'GET').sadd(membersKey, self.id).exec()) ?? [];
      noteSharedId(previous?.[1]);
      others = await readOthers();
      setDegraded(false);
    } catch (err) {
      setDegraded(true, err);
    }
  }

  /** Another process wrote our id's record since our last heartbeat: two nodes share an id. */
  function noteSharedId(previous: unknown): void {
    if (typeof previous !== 'string' || sharedIdLogged) return;
    const parsed = parseRecord(previous);
    if (parsed && parsed.instance !== instance && Date.parse(parsed.heartbeatAt) > Date.now() - ttlMs) {
      sharedIdLogged = true;
      logger.error({ nodeId: self.id }, 'cluster: another live process uses this node id (CLUSTER_NODE_ID must differ per node)');
    }
  }

  async function readOthers(): Promise<NodeRecord[]> {
    const ids = (await redis.smembers(membersKey)).filter((id) => id !== self.id).slice(0, MAX_NODES);
    if (ids.length === 0) return [];
    const values = await redis.mget(ids.map(nodeKey));
    const live: NodeRecord[] = [];
    const expired: string[] = [];
    ids.forEach((id, i) => {
      const value = values[i];
      const record = typeof value === 'string' ? parseRecord(value) : undefined;
      if (record && record.id === id) live.push(record);
      else if (value == null) expired.push(id);
    });
    // The set keeps ids whose record expired: trimmed by whoever reads them (idempotent).
    if (expired.length > 0) await redis.srem(membersKey, ...expired);
    return live.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      beating = beat().finally(() => {
        beating = undefined;
        schedule();
      });
    }, heartbeatMs);
    timer.unref();
  }

  return {
    /** Registers this node (or starts degraded when Redis does not answer) and starts the heartbeat. */
    async start(): Promise<void> {
      await beat();
      schedule();
    },
    view(): ClusterView {
      return { nodeId: self.id, degraded, nodes: current ? [current, ...others] : others };
    },
    /** Leaves the cluster: the heartbeat stops and this node's record goes at once (bounded by the command timeout). */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await beating;
      if (redis.status === 'ready') {
        try {
          // Only our own record: under a shared id (misconfigured) the other process's stays.
          const value = await redis.get(nodeKey(self.id));
          if (value !== null && parseRecord(value)?.instance === instance) await redis.multi().del(nodeKey(self.id)).srem(membersKey, self.id).exec();
        } catch {
          // Redis gone meanwhile: the record expires by itself within ttlMs.
        }
      }
      redis.disconnect();
    },
  };
}

export type Membership = ReturnType<typeof createMembership>;

function parseRecord(value: string): NodeRecord | undefined {
  if (value.length > 8_192) return undefined;
  try {
    const parsed = recordSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
