// GET /events: the bus as a Server-Sent Events stream (Hono's streamSSE), resumable with Last-Event-ID.
import { Hono } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { Logger } from '../logger.js';
import type { EncodedEvent, EventBus, ResyncReason, Subscription } from './bus.js';
import { MAX_FILTER_ROUTER_IDS, MAX_FILTER_TYPES } from './bus.js';
import { durableBefore, durableId, parseEventId } from './ids.js';
import { MAX_READ, type EventLog } from './log/log.js';
import type { Tail } from './log/tail.js';

export const DEFAULT_HEARTBEAT_MS = 15_000;
export const DEFAULT_MAX_STREAMS = 50;
/** Longest router id accepted in `?routerId=` (the relay's ids are 36-character UUIDs). */
export const MAX_ROUTER_ID_LENGTH = 128;
/** A Last-Event-ID longer than this cannot be one of ours (at most 16 digits): resync, unread. */
export const MAX_LAST_EVENT_ID_LENGTH = 128;
/** How long a resume waits for this instance to read an id another instance committed a moment ago. */
const CATCH_UP_MS = 2_000;
/** Events written to the socket in one write when a reader is behind. */
const WRITE_BATCH = 256;
/**
 * How long the first event of a batch waits for others before the write. Events come in bursts (a
 * close cascade publishes several in one tick, requests close in quick succession); one write per
 * event (or per turn of the event loop) would cost a system call and a wake-up of the reader each,
 * about a tenth of the relay's CPU under load with one reader attached.
 */
export const COALESCE_MS = 20;
const ROUTER_ID = /^[A-Za-z0-9_.:-]+$/;
/** A type filter: a type (`router.closed`), a prefix ending in `.*` (`auth.*`), or `*`. */
export const TYPE_PATTERN = /^(\*|[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)*(\.\*)?)$/;
export const MAX_TYPE_PATTERN_LENGTH = 64;

/** Error codes this sub-app answers with besides the guard's UNAUTHORIZED (same `{code, message, details?}` shape). */
export const EVENT_STREAM_ERRORS = {
  VALIDATION_ERROR: { status: 400, meaning: 'a routerId filter is malformed, too long, or there are more than 100; or a types filter is malformed or there are more than 50' },
  STREAM_LIMIT_EXCEEDED: { status: 503, meaning: 'EVENTS_MAX_STREAMS streams are open already; Retry-After is set' },
} as const;

export interface EventStreamOptions {
  /** Comment line interval so proxies keep an idle stream open (EVENTS_HEARTBEAT_S * 1000). */
  heartbeatMs?: number;
  /** Streams open at once (EVENTS_MAX_STREAMS); beyond, 503 STREAM_LIMIT_EXCEEDED. */
  maxStreams?: number;
  /** Live events a stream may leave unwritten before it is cut off (EVENTS_SUBSCRIBER_MAX_QUEUED). */
  maxQueued?: number;
  logger?: Logger;
  /**
   * The event log and this instance's follower of it (issue 39): a resume from an id older than the
   * bus's buffer is replayed from the log, then continues live.
   */
  log?: Pick<EventLog, 'after' | 'bounds'>;
  tail?: Pick<Tail, 'wake'>;
}

export interface EventStreamStats {
  open: number;
  opened: number;
  cutOff: number;
  refused: number;
}

export interface EventStreams {
  /** A Hono app serving `GET /events`; mount it where the token guard applies: `internal.route('/v1', streams.routes)`. */
  routes: ReturnType<typeof buildRoutes>;
  /** Streams open now (for /internal/info and the metric). */
  open(): number;
  stats(): EventStreamStats;
  /**
   * Ends every open stream gracefully, after the events it had not yet written, and those opened later
   * at once (shutdown: open streams would hold server.close() otherwise).
   */
  close(): void;
}

type NodeBindings = { outgoing?: { destroy?: (error?: Error) => void } } | undefined;

function frame(event: EncodedEvent): string {
  // The JSON the bus took at publish time; JSON.stringify escapes CR and LF, so it is always one line.
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${event.json}\n\n`;
}

/** A position without an event: `id:` for EventSource, the comment for parsers that report no id without data. */
function cursorLines(id: string): string {
  return `: cursor ${id}\nid: ${id}\n\n`;
}

function relayError(code: keyof typeof EVENT_STREAM_ERRORS, message: string, details?: Record<string, unknown>) {
  return details ? { code, message, details } : { code, message };
}

function routerFilterIssues(routerIds: string[]): Array<{ path: string; message: string }> {
  if (routerIds.length > MAX_FILTER_ROUTER_IDS) return [{ path: 'routerId', message: `at most ${MAX_FILTER_ROUTER_IDS} routerId values` }];
  const issues: Array<{ path: string; message: string }> = [];
  routerIds.forEach((id, i) => {
    if (id.length === 0 || id.length > MAX_ROUTER_ID_LENGTH || !ROUTER_ID.test(id)) {
      issues.push({ path: `routerId.${i}`, message: `must be 1 to ${MAX_ROUTER_ID_LENGTH} characters of A-Z a-z 0-9 _ . : -` });
    }
  });
  return issues;
}

function typeFilterIssues(types: string[]): Array<{ path: string; message: string }> {
  if (types.length > MAX_FILTER_TYPES) return [{ path: 'types', message: `at most ${MAX_FILTER_TYPES} types values` }];
  const issues: Array<{ path: string; message: string }> = [];
  types.forEach((type, i) => {
    if (type.length > MAX_TYPE_PATTERN_LENGTH || !TYPE_PATTERN.test(type)) {
      issues.push({ path: `types.${i}`, message: `an event type (router.closed), a prefix ending in .* (auth.*), or *; at most ${MAX_TYPE_PATTERN_LENGTH} characters` });
    }
  });
  return issues;
}

/** Up to `max` of the events the subscription has unread, as frames (all of them: bounded by the replay buffer), and the last one's id. */
function drain(sub: Subscription, max = Number.POSITIVE_INFINITY): { chunk: string; lastId: string | undefined } {
  let chunk = '';
  let lastId: string | undefined;
  for (let i = 0; i < max; i++) {
    const event = sub.pollEncoded();
    if (event === undefined) break;
    chunk += frame(event);
    lastId = event.id;
  }
  return { chunk, lastId };
}

/** Where a stream resuming after `lastEventId` starts: in the bus's buffer, after a replay from the log, or with `resync`. */
type ResumePlan = { from: 'buffer' } | { from: 'log'; logId: number } | { from: 'resync'; reason: ResyncReason };

async function planResume(bus: EventBus, log: Pick<EventLog, 'bounds'>, tail: Pick<Tail, 'wake'> | undefined, lastEventId: string): Promise<ResumePlan> {
  let place = bus.locate(lastEventId);
  const id = parseEventId(lastEventId);
  if (place.from === 'resync' && place.reason === 'unknown_id' && id !== undefined) {
    // Committed on another instance a moment ago, not yet read here: wait for this instance to read it.
    if (durableBefore(id) <= (await log.bounds()).last) {
      tail?.wake();
      const deadline = Date.now() + CATCH_UP_MS;
      while (bus.locate(lastEventId).from === 'resync' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      place = bus.locate(lastEventId);
    }
  }
  if (place.from !== 'log') return place;
  const { first, given } = await log.bounds();
  // Retention pruned what follows it (or may have: an id just below the oldest kept is fine).
  const pruned = first === undefined ? place.logId < given : place.logId + 1 < first;
  return pruned ? { from: 'resync', reason: 'too_old' } : place;
}

/**
 * Writes the durable events after `afterLogId` up to `toLogId` (the bus's head when the subscription
 * started: what comes after, it delivers) that pass `sub`'s filters; returns the last id written.
 */
async function replayLog(stream: SSEStreamingApi, sub: Subscription, log: Pick<EventLog, 'after'>, afterLogId: number, toLogId: number): Promise<string | undefined> {
  let lastId: string | undefined;
  for (let from = afterLogId; from < toLogId && !sub.ended; ) {
    const events = await log.after(from, MAX_READ);
    let chunk = '';
    for (const event of events) {
      if (event.id > toLogId) break;
      from = event.id;
      if (!sub.accepts(JSON.parse(event.payload) as { type: string })) continue;
      const id = String(durableId(event.id));
      chunk += `id: ${id}\nevent: ${event.type}\ndata: {"id":"${id}",${event.payload.slice(1)}\n\n`;
      lastId = id;
    }
    if (chunk !== '') await stream.write(chunk);
    if (events.length < MAX_READ || events.at(-1)!.id >= toLogId) break;
  }
  return lastId;
}

function buildRoutes(bus: EventBus, options: EventStreamOptions & { heartbeatMs: number; maxStreams: number }, state: {
  stats: EventStreamStats;
  subscriptions: Set<Subscription>;
  closed: { value: boolean };
  /** What each stream still had to write when close() ended it: written before the stream ends. */
  tails: WeakMap<Subscription, string>;
}) {
  const { stats, subscriptions, tails } = state;
  const logger = options.logger;

  async function pump(stream: SSEStreamingApi, sub: Subscription, announceCursor: boolean, replayAfter: number | undefined) {
    // The last id the client was given (cursor, event, or position on a heartbeat): where it resumes.
    let given = sub.cursor;
    if (replayAfter !== undefined && options.log) {
      // The durable events it missed that the buffer no longer holds, up to where the subscription began.
      const replayed = await replayLog(stream, sub, options.log, replayAfter, durableBefore(Number(sub.cursor)));
      if (replayed !== undefined) given = replayed;
    } else if (announceCursor) {
      // A client that has seen nothing learns where it joined (EventSource keeps the id as its
      // Last-Event-ID; the comment is for parsers that do not report an id without data).
      await stream.write(cursorLines(sub.cursor));
    }
    let ready = sub.ready();
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const heartbeat = new Promise<'heartbeat'>((resolve) => (timer = setTimeout(resolve, options.heartbeatMs, 'heartbeat')));
      const first = await Promise.race([ready, heartbeat]);
      clearTimeout(timer);
      if (first === 'heartbeat') {
        // A filtered stream whose position moved past events of other routers says so, the way it
        // tells its cursor: a quiet client's Last-Event-ID then stays within the replay buffer.
        const position = sub.position;
        if (Number(position) > Number(given)) {
          given = position;
          await stream.write(': heartbeat\n' + cursorLines(position));
        } else {
          await stream.write(': heartbeat\n\n');
        }
        continue;
      }
      if (!first) break;
      // Let the burst gather (COALESCE_MS), then write it in one write.
      await new Promise<void>((resolve) => setTimeout(resolve, COALESCE_MS));
      const { chunk, lastId } = drain(sub, WRITE_BATCH);
      // A filtered stream may find nothing for it among the events that woke it.
      if (chunk !== '') await stream.write(chunk);
      if (lastId !== undefined) given = lastId;
      ready = sub.ready();
    }
    // Ended by close() (shutdown): the events published before it, the last rooms' closes among them.
    const tail = tails.get(sub);
    if (tail) await stream.write(tail);
  }

  // HEAD reaches this GET route too (Hono dispatches it as GET and drops the body): it is answered here
  // with the headers a GET would get and no stream, so that it never takes a slot.
  return new Hono().get('/events', async (c) => {
    const head = c.req.method === 'HEAD';
    const routerIds = c.req.queries('routerId') ?? [];
    const issues = routerFilterIssues(routerIds);
    if (issues.length > 0) return c.json(relayError('VALIDATION_ERROR', 'invalid routerId filter', { issues }), 400);
    const types = c.req.queries('types') ?? [];
    const typeIssues = typeFilterIssues(types);
    if (typeIssues.length > 0) return c.json(relayError('VALIDATION_ERROR', 'invalid types filter', { issues: typeIssues }), 400);
    if (stats.open >= options.maxStreams) {
      if (!head) stats.refused++;
      c.header('Retry-After', '5');
      return c.json(relayError('STREAM_LIMIT_EXCEEDED', `${options.maxStreams} event streams are open already`, { maxStreams: options.maxStreams }), 503);
    }
    c.header('X-Accel-Buffering', 'no'); // nginx: do not buffer the stream
    if (head) {
      c.header('Content-Type', 'text/event-stream');
      c.header('Cache-Control', 'no-cache');
      return c.body(null, 200);
    }
    // Last-Event-ID (what EventSource sends on a reconnection), else ?since= (a client that kept it).
    const header = c.req.header('Last-Event-ID') || c.req.query('since');
    let lastEventId = header === undefined || header === '' ? undefined : header.length > MAX_LAST_EVENT_ID_LENGTH ? '' : header;
    let replayAfter: number | undefined;
    let resync: ResyncReason | undefined;
    if (lastEventId !== undefined && options.log) {
      const plan = await planResume(bus, options.log, options.tail, lastEventId);
      if (plan.from === 'log') {
        // Subscribed at the head now; the stream first replays the log up to there.
        replayAfter = plan.logId;
        lastEventId = undefined;
      } else if (plan.from === 'resync') resync = plan.reason;
      if (stats.open >= options.maxStreams) {
        stats.refused++;
        c.header('Retry-After', '5');
        return c.json(relayError('STREAM_LIMIT_EXCEEDED', `${options.maxStreams} event streams are open already`, { maxStreams: options.maxStreams }), 503);
      }
    }
    const sub = bus.subscribe({
      routerIds,
      types,
      ...(lastEventId !== undefined ? { lastEventId } : {}),
      ...(resync ? { resync } : {}),
      ...(options.maxQueued ? { maxQueued: options.maxQueued } : {}),
    });
    stats.open++;
    stats.opened++;
    subscriptions.add(sub);
    // The slot goes back exactly once, on whichever end comes first: the pump ending (stream end,
    // shutdown, cut off, an error), the response stream cancelled, the client's connection gone
    // (also before the stream was read at all), or a throw before the stream exists.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      sub.close();
      subscriptions.delete(sub);
      stats.open--;
    };
    try {
      if (state.closed.value) sub.close(); // shutting down: the stream tells where it is, then ends
      const signal = c.req.raw.signal;
      if (signal.aborted) release();
      else signal.addEventListener('abort', release, { once: true });
      const env = c.env as NodeBindings;
      return streamSSE(c, async (stream) => {
        stream.onAbort(release);
        sub.onEnd((reason) => {
          if (reason !== 'overflow') return;
          stats.cutOff++;
          logger?.warn({ routerIds: routerIds.length ? routerIds : undefined }, 'event stream cut off: the client left too many events unread (it resumes with Last-Event-ID)');
          // A reader that stopped reading will not read a graceful end either: on @hono/node-server
          // drop the socket at once; elsewhere end the stream.
          if (env?.outgoing?.destroy) env.outgoing.destroy();
          stream.abort();
        });
        try {
          await pump(stream, sub, lastEventId === undefined && resync === undefined, replayAfter);
        } finally {
          release();
        }
      });
    } catch (error) {
      release();
      throw error;
    }
  });
}

/**
 * The event stream sub-app, its open-stream count and its shutdown.
 * @example
 * const streams = createEventStreams(bus, { heartbeatMs: config.events.heartbeatS * 1000, logger })
 * internal.route('/v1', streams.routes) // GET /internal/v1/events, behind the token guard
 */
export function createEventStreams(bus: EventBus, options: EventStreamOptions = {}): EventStreams {
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const maxStreams = options.maxStreams ?? DEFAULT_MAX_STREAMS;
  if (!(heartbeatMs > 0)) throw new Error('createEventStreams: heartbeatMs must be positive');
  if (!Number.isInteger(maxStreams) || maxStreams < 1) throw new Error('createEventStreams: maxStreams must be a positive integer');
  const stats: EventStreamStats = { open: 0, opened: 0, cutOff: 0, refused: 0 };
  const subscriptions = new Set<Subscription>();
  const closed = { value: false };
  const tails = new WeakMap<Subscription, string>();
  return {
    routes: buildRoutes(bus, { ...options, heartbeatMs, maxStreams }, { stats, subscriptions, closed, tails }),
    open: () => stats.open,
    stats: () => ({ ...stats }),
    close() {
      closed.value = true;
      // Taken now, while the subscriptions can still be read: a stream waiting out COALESCE_MS would
      // otherwise end without the events published just before the close (the drain's last router.closed).
      for (const sub of [...subscriptions]) {
        tails.set(sub, drain(sub).chunk);
        sub.close();
      }
    },
  };
}
