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
  /** Its CLUSTER_NODE_MAX_CONSUMERS (past it, its rooms' new transports go to other nodes); absent: none. */
  maxConsumers?: number | undefined;
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

/** What a node holds, as it lists it for the others each heartbeat (what node.lost names if it dies). */
export interface HeldResources {
  routerIds: string[];
  transportIds: string[];
  producerIds: string[];
  /** More than MAX_HELD_IDS of a kind: the lists hold the first ones only. */
  truncated: boolean;
}

/** A node whose record expired while its list of held resources was still there: it did not stop cleanly. */
export interface LostNode {
  record: NodeRecord;
  held: HeldResources;
  /** This node took the loss's lease: it alone announces it (node.lost). */
  announce: boolean;
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
  /** What this node holds now (called once a heartbeat); without it, no loss of this node is ever announced. */
  held?: () => HeldResources;
  /** Told of each other node lost (every surviving node is told; one, `announce`, announces it). */
  onLost?: (lost: LostNode) => void;
  heartbeatMs?: number;
  /** How long a record outlives its last heartbeat. */
  ttlMs?: number;
  /** Prefix of the cluster's keys; distinct clusters sharing one Redis need distinct prefixes. */
  prefix?: string;
}

export const DEFAULT_HEARTBEAT_MS = 1_000;
const DEFAULT_PREFIX = 'cluster:';
export const DEFAULT_TTL_MS = 3_000;
/** Records read at most: a bound on what a corrupted or hostile Redis can make a node hold. */
export const MAX_NODES = 1_000;
/** A Redis command's longest wait: a heartbeat never hangs on a Redis that holds the connection but does not answer. */
const COMMAND_TIMEOUT_MS = 1_000;
/** Ids of one kind a node lists at most (a bound on the list's size in Redis: 10,000 ids are about 400 KB). */
export const MAX_HELD_IDS = 10_000;
/** How long a node's list outlives its last heartbeat: long enough for the survivors to read it once its record expired. */
export const HELD_TTL_MS = 60_000;
/** How long the lease of one loss is kept: one announcement per lost process. */
const LOST_LEASE_MS = 10 * 60_000;
/** Between two reads of the other nodes outside the heartbeat (discover()) at least: a flood of misses reads Redis a few times a second. */
const DISCOVER_INTERVAL_MS = 250;

const heldSchema = z.strictObject({
  routerIds: z.array(z.string().max(128)).max(MAX_HELD_IDS),
  transportIds: z.array(z.string().max(128)).max(MAX_HELD_IDS),
  producerIds: z.array(z.string().max(128)).max(MAX_HELD_IDS),
  truncated: z.boolean(),
});

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
    maxConsumers: z.int().min(0).optional(),
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
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const membersKey = `${prefix}nodes`;
  const nodeKey = (id: string) => `${prefix}node:${id}`;
  // Per process (instance): a new process under a lost node's id has its own list, and its own loss.
  const heldKey = (id: string, of: string) => `${prefix}held:${id}:${of}`;
  const lostKey = (id: string, of: string) => `${prefix}lost:${id}:${of}`;
  const instance = randomUUID();
  let lastHeld: string | undefined;
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
  /** After an outage: the nodes known before it, kept in the view until `until` unless read again. */
  let keptUntil: { until: number; nodes: NodeRecord[] } | undefined;
  let current: NodeRecord | undefined;
  let degraded = false;
  let sharedIdLogged = false;
  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<void> | undefined;
  let stopped = false;
  /** The read of discover() in flight or last made, and when it started. */
  let discovery: { at: number; read: Promise<NodeRecord[]> } | undefined;

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
      const multi = redis.multi().set(nodeKey(self.id), JSON.stringify(record), 'PX', ttlMs, 'GET').sadd(membersKey, self.id);
      const held = options.held ? JSON.stringify(options.held()) : undefined;
      // The list is written when it changed, else only kept alive.
      if (held !== undefined) {
        if (held !== lastHeld) multi.set(heldKey(self.id, instance), held, 'PX', HELD_TTL_MS);
        else multi.pexpire(heldKey(self.id, instance), HELD_TTL_MS);
      }
      const [previous] = (await multi.exec()) ?? [];
      lastHeld = held;
      noteSharedId(previous?.[1]);
      const before = others;
      const read = await readOthers();
      // Back from an outage, the other nodes may not have written their records again yet (a Redis that
      // restarted empty has none): the nodes known before stay in the view for one expiry, unless they
      // wrote a record meanwhile, so that calls about their resources are still carried, not answered 404.
      if (degraded) keptUntil = { until: Date.now() + ttlMs, nodes: before };
      if (keptUntil && Date.now() >= keptUntil.until) keptUntil = undefined;
      others = keptUntil ? withKept(read, keptUntil.nodes) : read;
      setDegraded(false);
      await noteGone(before, others);
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

  /**
   * The processes that were live at the last read and are not now (their record expired or was
   * removed, or a new process took the id). One that left its list of held resources behind did not stop
   * cleanly (a clean stop removes the list): it is lost. Each survivor is told; the one that takes the
   * loss's lease announces it.
   */
  async function noteGone(before: NodeRecord[], now: NodeRecord[]): Promise<void> {
    if (!options.onLost) return;
    const live = new Set(now.map((record) => `${record.id}:${record.instance}`));
    for (const record of before) {
      if (live.has(`${record.id}:${record.instance}`)) continue;
      try {
        const value = await redis.get(heldKey(record.id, record.instance));
        const held = value === null ? undefined : parseHeld(value);
        if (!held) continue;
        const lease = await redis.set(lostKey(record.id, record.instance), self.id, 'PX', LOST_LEASE_MS, 'NX');
        options.onLost({ record, held, announce: lease === 'OK' });
      } catch (err) {
        logger.warn({ err, nodeId: record.id }, 'cluster: could not read what a departed node held');
      }
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
    return live.sort(byId);
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
    /** The prefix of the cluster's Redis keys (and channels). */
    prefix,
    view(): ClusterView {
      return { nodeId: self.id, degraded, nodes: current ? [current, ...others] : others };
    },
    /**
     * The other nodes registered now, read from Redis; the ones this node's last heartbeat did not read
     * are added to the view (a node that just joined is otherwise unknown here for up to a heartbeat).
     * Only adds: departures and losses stay the heartbeat's. Answers every node read, not only the ones
     * added by this call: a caller compares them with the nodes it asked itself (a heartbeat or another
     * caller may have added one in between). Reads Redis at most once per DISCOVER_INTERVAL_MS however
     * many ask; none while degraded (the answer is then []).
     */
    async discover(): Promise<NodeRecord[]> {
      if (degraded || stopped || redis.status !== 'ready') return [];
      const now = Date.now();
      if (!discovery || now - discovery.at >= DISCOVER_INTERVAL_MS) discovery = { at: now, read: readOthers().catch(() => []) };
      const read = await discovery.read;
      const known = new Set(others.map((record) => record.id));
      const added = read.filter((record) => !known.has(record.id));
      if (added.length > 0) others = [...others, ...added].sort(byId);
      return read;
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
          // The list first: a node whose record goes without a list stopped cleanly, and is not lost.
          await redis.del(heldKey(self.id, instance));
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

/** Records in the order of their ids (the view's order after this node's own). */
function byId(a: NodeRecord, b: NodeRecord): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** `read`, plus the nodes of `kept` it lacks, by id. */
function withKept(read: NodeRecord[], kept: NodeRecord[]): NodeRecord[] {
  const ids = new Set(read.map((record) => record.id));
  const missing = kept.filter((record) => !ids.has(record.id));
  return missing.length === 0 ? read : [...read, ...missing].sort(byId);
}

function parseHeld(value: string): HeldResources | undefined {
  if (value.length > 4 * 130 * MAX_HELD_IDS) return undefined;
  try {
    const parsed = heldSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function parseRecord(value: string): NodeRecord | undefined {
  if (value.length > 8_192) return undefined;
  try {
    const parsed = recordSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
