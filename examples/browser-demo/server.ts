// The demo's signaling server: the backend a product would write. It holds the relay's internal
// token (the browser never sees it), lets only holders of a valid account token in, and turns the
// page's few JSON calls into relay calls through the typed relay client. It follows the relay's event
// stream (relay.events()) instead of assuming: what closes on the relay, for whatever reason (a
// producer closed by someone else, a transport gone, the worker that held the room dying), is
// dropped from the session and told to the page, which removes the tiles or ends the call.
import { randomUUID } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { proxy } from 'hono/proxy';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import { createRelayClient, RelayClientError, type DtlsParameters, type RelayStreamEvent, type RtpCapabilities, type RtpParameters } from '../../src/client/relay-client.js';

export interface SignalingOptions {
  /** Origin of the chat-backend service, e.g. `http://127.0.0.1:3100`: account API and relay. */
  serviceUrl: string;
  /** The service's INTERNAL_TOKEN. Stays on this server. */
  internalToken: string;
  /** The page: index.html and the esbuild bundle of page.ts; the WHIP and WHEP pages (plain scripts). Served from memory. */
  assets: { html: string; script: string; whip: string; whep: string };
  /** Sessions one user may hold at once; joining beyond it closes the user's oldest. */
  maxSessionsPerUser?: number;
}

/**
 * A room: one router on the relay, created with active-speaker detection, shared by the sessions that
 * joined it by name (a join without a name gets a room of its own).
 */
interface Room {
  name: string;
  routerId: string;
  sessions: Set<Session>;
  /** The last `router.activeSpeaker` of the relay: the audio producer and whose it is. */
  activeSpeaker?: { producerId: string; username: string };
}

/** One join of one page: its room, and what the page created in it. */
interface Session {
  id: string;
  userId: number;
  username: string;
  room: Room;
  routerId: string;
  transports: Map<string, 'send' | 'recv'>;
  producers: Set<string>;
  consumers: Set<string>;
  /** What the relay reported about this session, not yet fetched by the page (bounded). */
  notices: Notice[];
  /** WHIP and WHEP endpoints minted for this session's page: revoked when it leaves. */
  endpoints: { kind: 'whip' | 'whep'; id: string }[];
  /** Set when the relay closed the router under it (worker died, shutdown): the page ends the call. */
  ended?: string;
  dataProducers: Set<string>;
}

/** What the page is told: a resource of its session closed on the relay, or the whole room ended. */
type Notice =
  | { type: 'transport.closed'; transportId: string; reason: string }
  | { type: 'producer.closed'; producerId: string; reason: string }
  | { type: 'consumer.closed'; consumerId: string; producerId: string; reason: string }
  | { type: 'ended'; reason: string };

const MAX_NOTICES = 100;

type User = { id: number; username: string };
type Env = { Variables: { user: User } };

// The relay checks rtpParameters, rtpCapabilities and dtlsParameters itself (and answers
// VALIDATION_ERROR); here only what this server needs to decide ownership is checked.
const joinBody = z.object({ room: z.string().regex(/^[\w-]{1,40}$/).optional() });
const transportBody = z.object({ direction: z.enum(['send', 'recv']) });
const connectBody = z.object({ dtlsParameters: z.looseObject({}) });
const produceBody = z.object({ transportId: z.string(), kind: z.enum(['audio', 'video']), rtpParameters: z.looseObject({}) });
const consumeBody = z.object({ transportId: z.string(), producerId: z.string(), rtpCapabilities: z.looseObject({}) });
const produceDataBody = z.object({
  transportId: z.string(),
  sctpStreamParameters: z.object({ streamId: z.number().int(), ordered: z.boolean().optional() }),
  label: z.string().max(64).optional(),
  protocol: z.string().max(64).optional(),
});
const consumeDataBody = z.object({ transportId: z.string(), dataProducerId: z.string() });
const endpointBody = z.object({ room: z.string().regex(/^[\w-]{1,40}$/) });
/** How long a WHIP or WHEP token of the demo lives: a page's session, not longer. */
const ENDPOINT_TTL_S = 3_600;


async function parse<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const body: unknown = await c.req.json().catch(() => undefined);
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HTTPException(400, { message: `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}` });
  }
  return parsed.data;
}

function forbidden(what: string): never {
  throw new HTTPException(404, { message: `${what} not found in this session` });
}

/**
 * The signaling app: `/signaling/*` (JSON, `Authorization: Bearer <access token>`), `/api/*`
 * proxied to the service so the page has a single origin, and the page itself.
 * @example serve({ fetch: createSignalingApp({ serviceUrl, internalToken, assets }).app.fetch, port: 8080 })
 */
export function createSignalingApp(options: SignalingOptions) {
  const serviceUrl = options.serviceUrl.replace(/\/+$/, '');
  const maxSessionsPerUser = options.maxSessionsPerUser ?? 4;
  const relay = createRelayClient({ baseUrl: serviceUrl, token: options.internalToken });
  const sessions = new Map<string, Session>();
  /** Named rooms, by name. */
  const rooms = new Map<string, Room>();
  /** router id → its room: events name routers. */
  const byRouter = new Map<string, Room>();

  function notify(session: Session, notice: Notice) {
    session.notices.push(notice);
    if (session.notices.length > MAX_NOTICES) session.notices.splice(0, session.notices.length - MAX_NOTICES);
  }

  function endRoom(room: Room, reason: string) {
    byRouter.delete(room.routerId);
    if (rooms.get(room.name) === room) rooms.delete(room.name);
    for (const session of room.sessions) endSession(session, reason);
  }

  function endSession(session: Session, reason: string) {
    if (session.ended) return;
    session.ended = reason;
    session.transports.clear();
    session.producers.clear();
    session.consumers.clear();
    notify(session, { type: 'ended', reason });
  }

  /** Applies one relay event to the session it concerns (events of other routers are not ours). */
  function follow(event: RelayStreamEvent) {
    if (event.type === 'worker.died') {
      for (const routerId of event.routerIds) {
        const room = byRouter.get(routerId);
        if (room) endRoom(room, 'worker_died');
      }
      return;
    }
    if (event.type === 'resync') {
      // Events were missed (the relay restarted, or this server fell too far behind): nothing
      // here can be trusted to be open any more; the pages join again.
      for (const room of [...byRouter.values()]) endRoom(room, `resync: ${event.reason}`);
      return;
    }
    if (!('routerId' in event)) return;
    const room = byRouter.get(event.routerId);
    if (!room) return;
    if (event.type === 'router.closed') return endRoom(room, event.reason);
    if (event.type === 'router.activeSpeaker') {
      // The producer's appData says whose it is (set when it was created, below).
      const username = typeof event.appData.username === 'string' ? event.appData.username : '?';
      room.activeSpeaker = { producerId: event.producerId, username };
      return;
    }
    for (const session of room.sessions) {
      switch (event.type) {
        case 'transport.closed':
          if (session.transports.delete(event.transportId)) notify(session, { type: event.type, transportId: event.transportId, reason: event.reason });
          break;
        case 'producer.closed':
          if (session.producers.delete(event.producerId)) notify(session, { type: event.type, producerId: event.producerId, reason: event.reason });
          break;
        case 'consumer.closed':
          if (session.consumers.delete(event.consumerId)) {
            notify(session, { type: event.type, consumerId: event.consumerId, producerId: event.producerId, reason: event.reason });
          }
          break;
      }
    }
  }

  // Followed from start-up to closeAll(); the iterator reconnects on its own with Last-Event-ID.
  const following = new AbortController();
  void (async () => {
    try {
      for await (const event of relay.events({ signal: following.signal })) follow(event);
    } catch (error) {
      if (!following.signal.aborted) console.error('signaling: the relay event stream failed', error);
    }
  })();

  /** The browser's address, for the service's per-client rate limits (it runs with TRUST_PROXY=xff). */
  function forwardedFor(c: Context): Record<string, string> {
    try {
      const address = getConnInfo(c).remote.address;
      return address ? { 'X-Forwarded-For': address } : {};
    } catch {
      return {};
    }
  }

  const ignoreGone = (error: unknown) => {
    if (!(error instanceof RelayClientError && error.code === 'NOT_FOUND')) throw error;
  };

  async function closeSession(session: Session) {
    sessions.delete(session.id);
    const { room } = session;
    room.sessions.delete(session);
    if (session.ended) return;
    // Its WHIP and WHEP endpoints first: their tokens stop working, their sessions end.
    await Promise.all(session.endpoints.map(({ kind, id }) => (kind === 'whip' ? relay.closeWhipEndpoint(id) : relay.closeWhepEndpoint(id)).catch(ignoreGone)));
    if (room.sessions.size > 0) {
      // Others stay: closing this page's transports closes its producers, and on the relay the
      // others' consumers of them (they learn it from consumer.closed).
      await Promise.all([...session.transports.keys()].map((id) => relay.closeTransport(id).catch(ignoreGone)));
      return;
    }
    byRouter.delete(room.routerId);
    if (rooms.get(room.name) === room) rooms.delete(room.name);
    // Closing the router closes its transports, producers and consumers on the relay.
    await relay.closeRouter(room.routerId).catch(ignoreGone);
  }

  /** The producers of everyone in the session's room. */
  function roomProducers(session: Session): Set<string> {
    return new Set([...session.room.sessions].flatMap((s) => [...s.producers]));
  }

  function sessionOf(c: Context<Env>): Session {
    const session = sessions.get(c.req.param('sessionId') ?? '');
    if (!session || session.userId !== c.get('user').id) forbidden('session');
    return session;
  }

  function transportOf(session: Session, id: string, direction: 'send' | 'recv'): string {
    if (session.transports.get(id) !== direction) forbidden(`${direction} transport`);
    return id;
  }

  /** Joins a room by name (or one of the page's own): the room's router is created on the first join. */
  async function join(user: User, roomName: string | undefined): Promise<Session> {
    const mine = [...sessions.values()].filter((s) => s.userId === user.id);
    for (const old of mine.slice(0, Math.max(0, mine.length - maxSessionsPerUser + 1))) await closeSession(old);
    let room = roomName === undefined ? undefined : rooms.get(roomName);
    if (!room) {
      const name = roomName ?? `own-${randomUUID()}`;
      const router = await relay.createRouter({ appData: { room: name }, speakerDetection: { activeSpeaker: true } });
      room = { name, routerId: router.id, sessions: new Set() };
      if (roomName !== undefined) rooms.set(name, room);
      byRouter.set(router.id, room);
    }
    const session: Session = {
      id: randomUUID(),
      userId: user.id,
      username: user.username,
      room,
      routerId: room.routerId,
      transports: new Map(),
      producers: new Set(),
      consumers: new Set(),
      notices: [],
      endpoints: [],
      dataProducers: new Set(),
    };
    sessions.set(session.id, session);
    room.sessions.add(session);
    return session;
  }

  const signaling = new Hono<Env>()
    // Who may join: whoever holds an access token the account API accepts right now.
    .use(async function accountToken(c, next) {
      const authorization = c.req.header('authorization');
      if (!authorization) throw new HTTPException(401, { message: 'log in first' });
      const res = await fetch(`${serviceUrl}/api/v1/auth/profile`, { headers: { Authorization: authorization, ...forwardedFor(c) } });
      const body = (await res.json().catch(() => undefined)) as { code?: number; data?: User } | undefined;
      if (res.status === 401) throw new HTTPException(401, { message: 'access token not accepted; log in again' });
      if (!res.ok || body?.code !== 0 || !body.data) throw new HTTPException(502, { message: `account API answered HTTP ${res.status}` });
      c.set('user', { id: body.data.id, username: body.data.username });
      await next();
    })
    // Join a room by name (or one of the page's own): its router's rtpCapabilities are what
    // Device.load() needs. The router detects the active speaker among the audio producers.
    .post('/sessions', async (c) => {
      const { room } = c.req.header('content-type')?.includes('json') ? await parse(c, joinBody) : {};
      const session = await join(c.get('user'), room);
      const { rtpCapabilities } = await relay.getRouter(session.routerId);
      return c.json({ sessionId: session.id, user: c.get('user'), routerRtpCapabilities: rtpCapabilities }, 201);
    })
    // The WHIP and WHEP pages: a session in a named room, and an endpoint of the room whose URL and
    // token the page uses with plain fetch and RTCPeerConnection. The endpoint is revoked when the
    // session ends (DELETE /sessions/:id, or the room closing on the relay).
    .post('/:kind{whip|whep}', async (c) => {
      const kind = c.req.param('kind') as 'whip' | 'whep';
      const { room } = await parse(c, endpointBody);
      const session = await join(c.get('user'), room);
      const appData = { userId: session.userId, username: session.username };
      const endpoint = kind === 'whip' ? await relay.createWhipEndpoint({ routerId: session.routerId, appData, ttlS: ENDPOINT_TTL_S }) : await relay.createWhepEndpoint({ routerId: session.routerId, appData, ttlS: ENDPOINT_TTL_S });
      session.endpoints.push({ kind, id: endpoint.id });
      return c.json({ sessionId: session.id, url: endpoint.url, token: endpoint.token, expiresAt: endpoint.expiresAt }, 201);
    })
    .post('/sessions/:sessionId/transports', async (c) => {
      const session = sessionOf(c);
      const { direction } = await parse(c, transportBody);
      // SCTP for the chat's data channel.
      const t = await relay.createTransport({ routerId: session.routerId, direction, enableSctp: true });
      session.transports.set(t.id, direction);
      return c.json(
        { id: t.id, iceParameters: t.iceParameters, iceCandidates: t.iceCandidates, dtlsParameters: t.dtlsParameters, sctpParameters: t.sctpParameters },
        201,
      );
    })
    .post('/sessions/:sessionId/transports/:transportId/connect', async (c) => {
      const session = sessionOf(c);
      const id = c.req.param('transportId');
      if (!session.transports.has(id)) forbidden('transport');
      const { dtlsParameters } = await parse(c, connectBody);
      await relay.connectTransport(id, dtlsParameters as unknown as DtlsParameters);
      return c.json({ connected: true });
    })
    .post('/sessions/:sessionId/producers', async (c) => {
      const session = sessionOf(c);
      const body = await parse(c, produceBody);
      const transportId = transportOf(session, body.transportId, 'send');
      const producer = await relay.createProducer({
        transportId,
        kind: body.kind,
        rtpParameters: body.rtpParameters as unknown as RtpParameters,
        // Whose it is, carried by the relay's events about it (router.activeSpeaker names it).
        appData: { userId: session.userId, username: session.username },
      });
      session.producers.add(producer.id);
      return c.json({ id: producer.id }, 201);
    })
    // Mute and unmute: the producer is paused on the relay, so nothing of it is forwarded.
    .post('/sessions/:sessionId/producers/:producerId/:action{pause|resume}', async (c) => {
      const session = sessionOf(c);
      const id = c.req.param('producerId');
      if (!session.producers.has(id)) forbidden('producer');
      const { paused } = c.req.param('action') === 'pause' ? await relay.pauseProducer(id) : await relay.resumeProducer(id);
      return c.json({ paused });
    })
    // Chat: a data producer on the send transport, relayed to a data consumer on the recv transport.
    .post('/sessions/:sessionId/data-producers', async (c) => {
      const session = sessionOf(c);
      const body = await parse(c, produceDataBody);
      const transportId = transportOf(session, body.transportId, 'send');
      const dataProducer = await relay.createDataProducer({
        transportId,
        sctpStreamParameters: body.sctpStreamParameters,
        ...(body.label === undefined ? {} : { label: body.label }),
        ...(body.protocol === undefined ? {} : { protocol: body.protocol }),
      });
      session.dataProducers.add(dataProducer.id);
      return c.json({ id: dataProducer.id }, 201);
    })
    .post('/sessions/:sessionId/data-consumers', async (c) => {
      const session = sessionOf(c);
      const body = await parse(c, consumeDataBody);
      const transportId = transportOf(session, body.transportId, 'recv');
      if (!session.dataProducers.has(body.dataProducerId)) forbidden('data producer');
      const dataConsumer = await relay.createDataConsumer({ transportId, dataProducerId: body.dataProducerId });
      // What mediasoup-client's transport.consumeData() takes.
      return c.json(
        {
          id: dataConsumer.id,
          dataProducerId: dataConsumer.dataProducerId,
          sctpStreamParameters: dataConsumer.sctpStreamParameters,
          label: dataConsumer.label,
          protocol: dataConsumer.protocol,
        },
        201,
      );
    })
    .post('/sessions/:sessionId/consumers', async (c) => {
      const session = sessionOf(c);
      const body = await parse(c, consumeBody);
      const transportId = transportOf(session, body.transportId, 'recv');
      if (!roomProducers(session).has(body.producerId)) forbidden('producer');
      const consumer = await relay.createConsumer({
        transportId,
        producerId: body.producerId,
        rtpCapabilities: body.rtpCapabilities as unknown as RtpCapabilities,
      });
      session.consumers.add(consumer.id);
      // What mediasoup-client's transport.consume() takes. The relay created it paused.
      return c.json({ id: consumer.id, producerId: consumer.producerId, kind: consumer.kind, rtpParameters: consumer.rtpParameters }, 201);
    })
    .post('/sessions/:sessionId/consumers/:consumerId/resume', async (c) => {
      const session = sessionOf(c);
      const id = c.req.param('consumerId');
      if (!session.consumers.has(id)) forbidden('consumer');
      const { paused } = await relay.resumeConsumer(id);
      return c.json({ paused });
    })
    // The others in the room and what they send, for the page to consume.
    .get('/sessions/:sessionId/peers', (c) => {
      const session = sessionOf(c);
      const others = [...session.room.sessions].filter((s) => s !== session && !s.ended);
      return c.json({ peers: others.map((s) => ({ username: s.username, producerIds: [...s.producers] })) });
    })
    // What the relay reported since the last call: closed resources (remove their tiles), the end of
    // the room, and who speaks now.
    .get('/sessions/:sessionId/notices', (c) => {
      const session = sessionOf(c);
      const notices = session.notices.splice(0);
      return c.json({ notices, ended: session.ended ?? null, activeSpeaker: session.room.activeSpeaker ?? null });
    })
    .delete('/sessions/:sessionId', async (c) => {
      await closeSession(sessionOf(c));
      return c.body(null, 204);
    });

  const app = new Hono()
    .get('/', (c) => c.html(options.assets.html))
    .get('/page.js', (c) => c.body(options.assets.script, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }))
    .get('/whip', (c) => c.html(options.assets.whip))
    .get('/whep', (c) => c.html(options.assets.whep))
    // The account API, proxied unchanged so the page talks to one origin (no CORS).
    .all('/api/*', (c) => {
      const url = new URL(c.req.url);
      return proxy(`${serviceUrl}${url.pathname}${url.search}`, {
        ...c.req,
        headers: { ...c.req.header(), host: undefined, ...forwardedFor(c) },
        // The service's redirects (a provider sign-in's start and callback) go to the browser as they are.
        redirect: 'manual',
      });
    })
    .route('/signaling', signaling);

  app.onError((error, c) => {
    if (error instanceof HTTPException) return c.json({ error: error.message }, error.status);
    if (error instanceof RelayClientError) {
      // The relay's 4xx are the page's mistakes (bad parameters, wrong state); its 5xx are ours.
      const status = (error.status >= 400 && error.status < 500 ? error.status : 502) as ContentfulStatusCode;
      return c.json({ error: error.message, code: error.code }, status);
    }
    console.error('signaling error', error);
    return c.json({ error: 'internal error' }, 500);
  });

  return {
    app,
    /** Closes every session's router on the relay and stops following its events (on shutdown). */
    async closeAll() {
      await Promise.allSettled([...sessions.values()].map(closeSession));
      following.abort();
    },
    get sessionCount() {
      return sessions.size;
    },
  };
}
