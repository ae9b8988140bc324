// Calls about a resource another node holds, carried to that node and answered as it answers (issue 40):
// the same status, body and headers as if the caller had called the holder itself.
//
// Which resource a call is about: the id in its path (`/v1/transports/{id}/connect`), or for a creation
// the resource its body names as the place to create it in (`routerId` of a transport, `transportId` of
// a producer). An id this node holds is answered here. Any other is looked up in a cache of id → node
// (filled by earlier lookups and by the ids of what forwarded creations made), else asked of every
// other live node at once (GET /v1/cluster/resources/{id}): Redis is never on a call's path. A cached
// node that answers 404 for the id, or that left the cluster, is forgotten.
//
// A forwarded call carries FORWARDED_HEADER and is answered by its receiver, never forwarded again. The
// node's own internal token is not needed: the caller's credentials go along (every node shares the
// internal token), so the holder authenticates the call exactly as it would a direct one, over kept-alive
// connections (node-client.ts).
import type { Context, MiddlewareHandler } from 'hono';
import { Gauge, type Registry } from 'prom-client';
import { registerTotals } from '../../observability/totals.js';
import type { AppEnv } from '../../http/env.js';
import { RelayError } from '../errors.js';
import type { ClusterView, NodeRecord } from './membership.js';
import { callNode, nodeAnswers, type NodeAnswer } from './node-client.js';
import type { Placement } from './placement.js';

/** The header of a forwarded call (the forwarding node's id): its receiver answers it, never forwards it. */
export const FORWARDED_HEADER = 'x-cluster-forwarded-by';
/**
 * On a room placed on another node (POST /v1/routers): the time (epoch ms) after which the placing node
 * may have given the call up (its holder probe fails 1.5 s in). A node that reads the call only later (it
 * was stopped, or hung) makes no room nobody would know of: it answers 503 NODE_UNREACHABLE instead.
 */
export const PLACE_BY_HEADER = 'x-cluster-place-by';
/** On the answer to a forwarded call: the answering node's routers then (fresher than its heartbeat, for placement); not passed on. */
export const ROUTERS_HEADER = 'x-cluster-node-routers';
/**
 * On the answer to a forwarded call: the node that answered it in the end. It differs from the node
 * called when that node placed a transport of its room on a third node: the caller remembers a new
 * resource's id with the node that holds it. Never passed on to a client.
 */
export const HELD_BY_HEADER = 'x-cluster-held-by';

/** The collections whose `/{id}` paths name a resource one node holds. */
const COLLECTIONS = ['routers', 'transports', 'producers', 'consumers', 'data-producers', 'data-consumers', 'pipe-transports', 'plain-transports', 'recordings', 'whip-endpoints', 'whep-endpoints'] as const;
const BY_ID = new RegExp(`/v1/(?:${COLLECTIONS.join('|')})/([^/]+)(?:/[^/]+)?$`);
/** Creations: the body's field that names where the new resource is made. */
const CREATED_IN: Readonly<Record<string, 'routerId' | 'transportId'>> = {
  transports: 'routerId',
  'pipe-transports': 'routerId',
  'plain-transports': 'routerId',
  'whip-endpoints': 'routerId',
  'whep-endpoints': 'routerId',
  recordings: 'routerId',
  producers: 'transportId',
  consumers: 'transportId',
  'data-producers': 'transportId',
  'data-consumers': 'transportId',
};
const CREATE = /\/v1\/([a-z-]+)$/;
/** Creations that a room spanning nodes may place on another node (span.ts). */
const SPREADS = /\/v1\/(?:transports|plain-transports)$/;
const ROUTER_BY_ID = /\/v1\/routers\/([^/]+)$/;
/** POST: a new room, placed by load; GET: the list every node answers with its own rooms, merged by the node called. */
const ROUTERS = /\/v1\/routers$/;
/** What an id can be (mediasoup's UUIDs, the relay's own ids): anything else is answered here (400 or 404). */
const ID = /^[\w-]{1,128}$/;
/** Request and response headers that belong to one connection, not to the call. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length', 'content-encoding']);

/** Whether an answer to POST /v1/routers says the node takes no room now (DRAINING, ROUTER_LIMIT_EXCEEDED, too late). */
async function refusedRoom(answer: Response): Promise<boolean> {
  try {
    const { code } = (await answer.clone().json()) as { code?: unknown };
    // NODE_UNREACHABLE: it read the call past PLACE_BY_HEADER (it made nothing).
    return code === 'DRAINING' || code === 'ROUTER_LIMIT_EXCEEDED' || code === 'NODE_UNREACHABLE';
  } catch {
    return false;
  }
}

export const DEFAULT_FORWARD_TIMEOUT_MS = 15_000;
export const DEFAULT_LOCATE_TIMEOUT_MS = 1_500;
export const DEFAULT_MAX_CACHED = 100_000;
/** A forwarded call still waiting this long has its node probed (and again this long after each answered probe). */
export const DEFAULT_PROBE_AFTER_MS = 500;
/** How long a probed node has to answer GET /healthz before its waiting calls are given up (503 NODE_UNREACHABLE). */
export const DEFAULT_PROBE_TIMEOUT_MS = 1_000;

export interface ForwarderOptions {
  view: () => ClusterView;
  /** What this node holds under `id`, or undefined. */
  holds: (id: string) => string | undefined;
  /** A forwarded call's deadline while its node answers probes (the holder's engine calls and a recording's stop fit in it). */
  timeoutMs?: number;
  /** After how long a waiting call's node is probed, and between two probes. */
  probeAfterMs?: number;
  /** How long a probed node has to answer. */
  probeTimeoutMs?: number;
  /** How long a node asked whether it holds an id has to answer. */
  locateTimeoutMs?: number;
  /** Ids whose node is remembered at most (the oldest forgotten first). */
  maxCached?: number;
  /** Where a new room goes (POST /v1/routers): the chosen node makes it; without it, the node called does. */
  placement?: Placement;
  /** This node's routers now: told to the node that forwarded a call (ROUTERS_HEADER). */
  selfRouters?: () => number;
  /** The lost node (node.lost) that held `id`: a call about it answers 404 NODE_LOST. */
  lostNodeOf?: (id: string) => string | undefined;
  /** The nodes registered now (membership.discover): those not in the view read first are asked too before a call is answered 404 here. */
  discover?: () => Promise<NodeRecord[]>;
  /** Rooms that span nodes (span.ts): the node where a new transport of this node's room `roomId` goes (its part there made), or undefined: here. */
  spread?: (roomId: string) => Promise<NodeRecord | undefined>;
  /** The other nodes holding a part of this node's room `roomId`: GET /routers/{id} merges theirs. */
  partsOf?: (roomId: string) => string[];
}

export interface Forwarder {
  middleware: MiddlewareHandler<AppEnv>;
  /** The other node that holds `id` (remembered, else asked of every node with `headers`), or undefined. */
  find(id: string, headers: Record<string, string>): Promise<NodeRecord | undefined>;
  /** Calls carried to another node since the start, how many found no answer, ids cached, rooms placed on other nodes. */
  stats(): { forwarded: number; unreachable: number; cached: number; placedElsewhere: number };
}

/** @example app.use('/v1/*', createForwarder({ view: () => node.view(), holds: (id) => media.holds(id) }).middleware) */
export function createForwarder(options: ForwarderOptions): Forwarder {
  const timeoutMs = options.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
  const locateTimeoutMs = options.locateTimeoutMs ?? DEFAULT_LOCATE_TIMEOUT_MS;
  const maxCached = options.maxCached ?? DEFAULT_MAX_CACHED;
  const probeAfterMs = options.probeAfterMs ?? DEFAULT_PROBE_AFTER_MS;
  const probeTimeoutMs = options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const nodeOf = new Map<string, string>();
  /** The probe in flight per node, shared by every call waiting on that node. */
  const probes = new Map<string, Promise<boolean>>();
  let forwarded = 0;
  let unreachable = 0;
  let placedElsewhere = 0;

  function remember(id: string, nodeId: string): void {
    nodeOf.delete(id);
    nodeOf.set(id, nodeId);
    if (nodeOf.size > maxCached) nodeOf.delete(nodeOf.keys().next().value!);
  }

  /** The id the call is about, when it names one; the body is read (and kept for the route) only for creations. */
  async function subjectOf(c: Context<AppEnv>): Promise<string | undefined> {
    const path = c.req.path;
    const byId = BY_ID.exec(path);
    if (byId) return ID.test(byId[1]!) ? byId[1] : undefined;
    const create = c.req.method === 'POST' ? CREATE.exec(path) : null;
    const field = create ? CREATED_IN[create[1]!] : undefined;
    if (!field) return undefined;
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return undefined; // answered here: 400, as on any node
    }
    const id = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[field] : undefined;
    return typeof id === 'string' && ID.test(id) ? id : undefined;
  }

  /** Asks every other live node at once; the first that holds `id` wins. */
  async function locate(id: string, others: NodeRecord[], headers: Record<string, string>): Promise<{ node: NodeRecord } | { silent: string[] } | undefined> {
    const silent: string[] = [];
    const asks = others.map(async (node) => {
      try {
        const res = await callNode(node.url, 'GET', `/internal/v1/cluster/resources/${encodeURIComponent(id)}`, headers, undefined, locateTimeoutMs);
        if (res.status === 200) return node;
        if (res.status !== 404) silent.push(node.id);
      } catch {
        silent.push(node.id);
      }
      throw new Error('not held there');
    });
    try {
      return { node: await Promise.any(asks) };
    } catch {
      return silent.length > 0 ? { silent } : undefined;
    }
  }

  function credentials(c: Context<AppEnv>, selfId: string): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, value] of c.req.raw.headers) if (!HOP_BY_HOP.has(name)) headers[name] = value;
    headers[FORWARDED_HEADER] = selfId;
    const requestId = c.get('requestId');
    if (requestId && headers['x-request-id'] === undefined) headers['x-request-id'] = requestId;
    return headers;
  }

  function probe(node: NodeRecord): Promise<boolean> {
    let pending = probes.get(node.id);
    if (!pending) {
      pending = nodeAnswers(node.url, probeTimeoutMs).finally(() => probes.delete(node.id));
      probes.set(node.id, pending);
    }
    return pending;
  }

  /**
   * Gives up a call to `node` (aborts it) once the node stops answering at all, instead of waiting for
   * the call's own deadline: a stopped or hung process keeps accepting connections and never answers.
   * While the call waits, the node is probed every `probeAfterMs`; one that does not answer the probe
   * within `probeTimeoutMs`, or that left the cluster's view, is given up. A node that is only slow to
   * answer this call (a recording's stop) answers its probes, and the call goes on. Returns the stop.
   */
  function watch(node: NodeRecord, abort: AbortController): () => void {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const check = async (): Promise<void> => {
      const member = options.view().nodes.some((other) => other.id === node.id && other.instance === node.instance);
      const alive = member && (await probe(node));
      if (done) return;
      if (alive) timer = setTimeout(() => void check(), probeAfterMs);
      else abort.abort(new Error(`node ${node.id} stopped answering`));
    };
    timer = setTimeout(() => void check(), probeAfterMs);
    return () => {
      done = true;
      clearTimeout(timer);
    };
  }

  /** The call made on `node`, answered as it answered; undefined when it did not answer (refused, timed out, or the node stopped answering). */
  async function forward(c: Context<AppEnv>, node: NodeRecord, id: string | undefined, headers: Record<string, string>): Promise<Response | undefined> {
    const url = new URL(c.req.url);
    const method = c.req.method;
    const abort = new AbortController();
    const unwatch = watch(node, abort);
    let res: NodeAnswer;
    try {
      const body = method === 'GET' || method === 'HEAD' ? undefined : Buffer.from(await c.req.arrayBuffer());
      res = await callNode(node.url, method, `${url.pathname}${url.search}`, headers, body, timeoutMs, abort.signal);
    } catch {
      unreachable++;
      return undefined;
    } finally {
      unwatch();
    }
    forwarded++;
    const routers = Number(res.headers[ROUTERS_HEADER]);
    if (Number.isInteger(routers) && routers >= 0) options.placement?.observe(node.id, routers);
    if (id !== undefined && (res.status === 404 || (method === 'DELETE' && res.status < 300 && BY_ID.exec(url.pathname)?.[1] === id))) nodeOf.delete(id);
    if (res.status === 201 && res.headers['content-type']?.includes('json')) {
      // Made where the called node placed it (a transport of its room on a third node), else there.
      const heldBy = res.headers[HELD_BY_HEADER];
      const holder = typeof heldBy === 'string' && options.view().nodes.some((other) => other.id === heldBy) ? heldBy : node.id;
      try {
        const made = JSON.parse(res.body.toString('utf8')) as { id?: unknown };
        if (typeof made.id === 'string' && ID.test(made.id)) remember(made.id, holder);
      } catch {
        // not an object with an id: nothing to remember
      }
    }
    // A node answering a forwarded call passes the holder on to the node that called it; a client never sees it.
    const toNode = c.req.header(FORWARDED_HEADER) !== undefined;
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name) || name === ROUTERS_HEADER || (name === HELD_BY_HEADER && !toNode)) continue;
      for (const one of Array.isArray(value) ? value : [value]) out.append(name, one);
    }
    return new Response(res.status === 204 || res.status === 304 ? null : new Uint8Array(res.body), { status: res.status, headers: out });
  }

  /**
   * GET /v1/routers: this node's rooms and every other live node's, oldest first (ties: by node id, then
   * each node's own order), the same list whichever node answers. A node that does not answer makes it
   * 503 NODE_UNREACHABLE: a list missing a node's rooms would read as rooms that closed.
   */
  async function listEverywhere(c: Context<AppEnv>, next: () => Promise<void>): Promise<Response | void> {
    const view = options.view();
    const others = view.nodes.filter((node) => node.id !== view.nodeId);
    if (others.length === 0) return next();
    const headers = credentials(c, view.nodeId);
    const url = new URL(c.req.url);
    const theirs = Promise.all(
      others.map(async (node) => {
        try {
          const res = await callNode(node.url, 'GET', `${url.pathname}${url.search}`, headers, undefined, locateTimeoutMs);
          if (res.status === 200) return { nodeId: node.id, routers: (JSON.parse(res.body.toString('utf8')) as { routers: { createdAt: string }[] }).routers };
        } catch {
          // below: unreachable
        }
        return { nodeId: node.id, routers: undefined };
      }),
    );
    await next();
    const lists = await theirs;
    const silent = lists.filter((list) => list.routers === undefined).map((list) => list.nodeId);
    if (silent.length > 0) {
      unreachable++;
      throw new RelayError('NODE_UNREACHABLE', `the rooms of ${silent.join(', ')} could not be listed`, { nodeIds: silent });
    }
    if (c.res.status !== 200) return;
    const own = (await c.res.clone().json()) as { routers: { createdAt: string }[] };
    const all = [{ nodeId: view.nodeId, routers: own.routers }, ...lists].flatMap(({ nodeId, routers }) => (routers ?? []).map((router, index) => ({ router, nodeId, index })));
    all.sort((x, y) => (x.router.createdAt < y.router.createdAt ? -1 : x.router.createdAt > y.router.createdAt ? 1 : x.nodeId < y.nodeId ? -1 : x.nodeId > y.nodeId ? 1 : x.index - y.index));
    forwarded += others.length;
    const out = new Headers(c.res.headers);
    out.delete('content-length');
    c.res = new Response(JSON.stringify({ routers: all.map((entry) => entry.router) }), { status: 200, headers: out });
  }

  /** A new transport of this node's room, placed on another node by span.ts: that node's answer; undefined: made here. */
  async function spread(c: Context<AppEnv>, id: string | undefined): Promise<Response | undefined> {
    if (!options.spread || id === undefined || c.req.method !== 'POST' || !SPREADS.test(c.req.path) || options.holds(id) !== 'router') return undefined;
    const target = await options.spread(id);
    if (!target) return undefined;
    const answer = await forward(c, target, undefined, credentials(c, options.view().nodeId));
    if (!answer) throw new RelayError('NODE_UNREACHABLE', `node ${target.id}, where the transport was placed, did not answer`, { nodeIds: [target.id] });
    return answer;
  }

  /**
   * GET /v1/routers/{id} of this node's room with parts on other nodes: every part's transports (and the
   * kinds that stand for one), and the counts summed. A part's node that left the cluster is left out (the
   * part went with it); one that does not answer makes it 503 NODE_UNREACHABLE.
   */
  async function withParts(c: Context<AppEnv>, next: () => Promise<void>, nodeIds: string[]): Promise<void> {
    const view = options.view();
    const headers = credentials(c, view.nodeId);
    const url = new URL(c.req.url);
    const theirs = Promise.all(
      nodeIds.map(async (nodeId) => {
        const node = view.nodes.find((other) => other.id === nodeId);
        if (!node) return { nodeId, state: null };
        try {
          const res = await callNode(node.url, 'GET', `${url.pathname}${url.search}`, headers, undefined, locateTimeoutMs);
          if (res.status === 200) return { nodeId, state: JSON.parse(res.body.toString('utf8')) as Record<string, unknown> };
          if (res.status === 404) return { nodeId, state: null };
        } catch {
          // below: unreachable
        }
        return { nodeId, state: undefined };
      }),
    );
    await next();
    const parts = await theirs;
    const silent = parts.filter((part) => part.state === undefined).map((part) => part.nodeId);
    if (silent.length > 0) {
      unreachable++;
      throw new RelayError('NODE_UNREACHABLE', `the room's parts on ${silent.join(', ')} could not be read`, { nodeIds: silent });
    }
    if (c.res.status !== 200) return;
    const own = (await c.res.clone().json()) as Record<string, unknown>;
    for (const { state } of parts) {
      if (!state) continue;
      for (const [key, value] of Object.entries(state)) {
        const mine = own[key];
        if (Array.isArray(mine) && Array.isArray(value)) own[key] = [...(mine as unknown[]), ...(value as unknown[])];
        else if (key === 'counts' && mine && typeof mine === 'object' && value && typeof value === 'object') {
          const sums = mine as Record<string, number>;
          for (const [name, count] of Object.entries(value as Record<string, unknown>)) if (typeof count === 'number' && typeof sums[name] === 'number') sums[name] += count;
        }
      }
    }
    forwarded += parts.length;
    const out = new Headers(c.res.headers);
    out.delete('content-length');
    c.res = new Response(JSON.stringify(own), { status: 200, headers: out });
  }

  /** GET /v1/routers/{id} of a room of this node with parts elsewhere: their node ids; else undefined. */
  function partsToMerge(c: Context<AppEnv>): string[] | undefined {
    if (!options.partsOf || c.req.method !== 'GET') return undefined;
    const id = ROUTER_BY_ID.exec(c.req.path)?.[1];
    if (id === undefined || options.holds(id) !== 'router') return undefined;
    const nodeIds = options.partsOf(id);
    return nodeIds.length > 0 ? nodeIds : undefined;
  }

  const middleware: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (c.req.header(FORWARDED_HEADER) !== undefined) {
      const placeBy = Number(c.req.header(PLACE_BY_HEADER));
      if (c.req.method === 'POST' && ROUTERS.test(c.req.path) && Number.isFinite(placeBy) && Date.now() > placeBy) {
        throw new RelayError('NODE_UNREACHABLE', `this room's placement was given up before this node read it (${Date.now() - placeBy} ms late)`, { nodeIds: [options.view().nodeId] });
      }
      // The origin of a room that spans nodes places its transports and merges its state, however the call came.
      const placed = await spread(c, SPREADS.test(c.req.path) ? await subjectOf(c) : undefined);
      if (placed) return placed;
      const merged = partsToMerge(c);
      if (merged) await withParts(c, next, merged);
      else await next();
      if (options.selfRouters) c.header(ROUTERS_HEADER, String(options.selfRouters()));
      c.header(HELD_BY_HEADER, options.view().nodeId);
      return;
    }
    if (options.placement && c.req.method === 'POST' && ROUTERS.test(c.req.path)) {
      const view = options.view();
      const headers = credentials(c, view.nodeId);
      // A node that refuses the room (it began to drain, or is full, since its last heartbeat) or does not
      // answer is left out and another chosen; with none left the room is made here (a draining node
      // answers DRAINING then, as a single relay does).
      const excluded = new Set<string>();
      for (let node = options.placement.choose(view); node; node = options.placement.choose(view, excluded)) {
        // Well before a hung node's probe fails (probeAfterMs + probeTimeoutMs): a node that reads the call
        // later refuses it, and one that read it in time answers before this node gives it up (clocks in
        // step within a fraction of a second, as NTP keeps them).
        const answer = await forward(c, node, undefined, { ...headers, [PLACE_BY_HEADER]: String(Date.now() + probeAfterMs + probeTimeoutMs / 2) });
        if (answer && !(answer.status === 503 && (await refusedRoom(answer)))) {
          placedElsewhere++;
          return answer;
        }
        excluded.add(node.id);
      }
      return next();
    }
    if (c.req.method === 'GET' && ROUTERS.test(c.req.path)) return listEverywhere(c, next);
    const id = await subjectOf(c);
    if (id === undefined || options.holds(id) !== undefined) {
      const placed = await spread(c, id);
      if (placed) return placed;
      const merged = partsToMerge(c);
      return merged ? withParts(c, next, merged) : next();
    }
    const view = options.view();
    // A lost node (node.lost named the id) is not asked, even before this node's view drops it: the id may
    // still be held by a live node (a room that had a part on the lost one), else it answers NODE_LOST.
    const lostOn = options.lostNodeOf?.(id);
    const others = view.nodes.filter((node) => node.id !== view.nodeId && node.id !== lostOn);
    const headers = credentials(c, view.nodeId);
    const cachedId = nodeOf.get(id);
    let node = cachedId === undefined ? undefined : others.find((other) => other.id === cachedId);
    if (cachedId !== undefined && !node) nodeOf.delete(id);
    if (!node) {
      let found = others.length > 0 ? await locate(id, others, headers) : undefined;
      if (found === undefined) {
        // A node that joined since this node's last heartbeat is not in the view yet: a room just made
        // there must not read as closed (404) for up to a heartbeat.
        const asked = new Set(others.map((other) => other.id));
        const joined = ((await options.discover?.()) ?? []).filter((other) => other.id !== view.nodeId && other.id !== lostOn && !asked.has(other.id));
        if (joined.length > 0) found = await locate(id, joined, headers);
      }
      if (found === undefined) {
        if (lostOn !== undefined) throw new RelayError('NODE_LOST', `${id} was on node ${lostOn}, which was lost`, { nodeId: lostOn, id });
        return next(); // no node holds it: answered here (404, as on any node)
      }
      if ('silent' in found) {
        unreachable++;
        throw new RelayError('NODE_UNREACHABLE', `no node that answered holds ${id}, and ${found.silent.join(', ')} did not answer`, { nodeIds: found.silent });
      }
      node = found.node;
      remember(id, node.id);
    }
    const answer = await forward(c, node, id, headers);
    if (!answer) throw new RelayError('NODE_UNREACHABLE', `node ${node.id} holds ${id} and did not answer`, { nodeIds: [node.id] });
    return answer;
  };

  async function find(id: string, headers: Record<string, string>): Promise<NodeRecord | undefined> {
    const view = options.view();
    const others = view.nodes.filter((node) => node.id !== view.nodeId);
    const cached = others.find((other) => other.id === nodeOf.get(id));
    if (cached) return cached;
    const found = others.length > 0 ? await locate(id, others, { ...headers, [FORWARDED_HEADER]: view.nodeId }) : undefined;
    if (!found || !('node' in found)) return undefined;
    remember(id, found.node.id);
    return found.node;
  }

  return { middleware, find, stats: () => ({ forwarded, unreachable, cached: nodeOf.size, placedElsewhere }) };
}

/**
 * The forwarder's metrics, read from its counts when scraped.
 * @example registerForwardMetrics(metrics.registry, forwarder)
 */
export function registerForwardMetrics(registry: Registry, forwarder: Pick<Forwarder, 'stats'>): void {
  registerTotals(registry, () => forwarder.stats(), [
    ['relay_cluster_forwarded_total', 'Calls this node carried to the node holding their resource (answered there)', (stats) => stats.forwarded],
    ['relay_cluster_unreachable_total', 'Calls this node could not carry: the holder refused, did not answer, or stopped answering (503 NODE_UNREACHABLE)', (stats) => stats.unreachable],
    ['relay_cluster_placed_elsewhere_total', 'Rooms asked of this node and made on another node by placement', (stats) => stats.placedElsewhere],
  ]);
  new Gauge({
    name: 'relay_cluster_cached_ids',
    help: 'Resource ids whose node this node remembers',
    registers: [registry],
    collect() {
      this.set(forwarder.stats().cached);
    },
  });
}
