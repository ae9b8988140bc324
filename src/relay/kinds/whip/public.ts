// The public side of WHIP (RFC 9725) and WHEP: what OBS, GStreamer, a hardware encoder or a browser
// page calls with the endpoint's URL and bearer token. SDP in, SDP out; refusals are a status and a
// short text/plain body. CORS from any origin (the bearer token is the guard, no cookie is read),
// exposing what a page needs to read: Location, ETag, Link and Accept-Patch.
import { Hono, type Context } from 'hono';
import { cors } from 'hono/cors';
import type { Config } from '../../../config/index.js';
import type { AppEnv } from '../../../http/env.js';
import type { ErrorScope } from '../../../http/module.js';
import { iceServersFor } from '../../../turn/index.js';
import type { Logger } from '../../../logger.js';
import type { Bound } from '../../ops/index.js';
import { RelayError } from '../../errors.js';
import type { EndpointKind } from './endpoint.js';
import type * as ops from './ops.js';
import { WhipRefusal } from './ops.js';
import { SDP_BOUNDS } from './sdp.js';

export const WHIP_PATHS = ['/whip', '/whep'] as const;

const SDP = 'application/sdp';
const SDPFRAG = 'application/trickle-ice-sdpfrag';

export interface PublicDeps {
  readonly media: Bound<typeof ops>;
  readonly turn?: Config['turn'];
}

/** Reads a body of at most `max` bytes: 400 beyond it, whatever Content-Length said. */
async function boundedText(c: Context<AppEnv>, max: number): Promise<string> {
  const length = Number(c.req.header('content-length') ?? '0');
  if (length > max) throw new WhipRefusal(400, `body exceeds ${max} bytes`);
  const body = c.req.raw.body;
  if (!body) return '';
  const reader = body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw new WhipRefusal(400, `body exceeds ${max} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function requireType(c: Context<AppEnv>, type: string): void {
  const given = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (given !== type) throw new WhipRefusal(415, `Content-Type must be ${type}`);
}

/** One Link header value per TURN URL, with credentials good for the endpoint's session (RFC 9725 4.4). */
function iceServerLinks(turn: Config['turn'], userKey: string): string[] {
  if (!turn) return [];
  const { iceServers } = iceServersFor(turn, userKey, new Date());
  return iceServers.flatMap((server) => {
    const urls = Array.isArray(server.urls) ? server.urls : [server.urls];
    return urls.map((url) =>
      server.username === undefined
        ? `<${url}>; rel="ice-server"`
        : `<${url}>; rel="ice-server"; username="${server.username}"; credential="${server.credential}"; credential-type="password"`,
    );
  });
}

/** The routes of one kind of endpoint: POST on the endpoint, PATCH and DELETE on a session. */
function endpointRoutes(kind: EndpointKind, deps: PublicDeps) {
  const { media } = deps;
  const open = kind === 'whip' ? media.publishWhip : media.playWhep;
  return new Hono<AppEnv>()
    .options('/:id', (c) => {
      c.header('Accept-Post', SDP);
      return c.body(null, 204);
    })
    .post('/:id', async (c) => {
      const endpoint = media.authorizeEndpoint(kind, c.req.param('id'), c.req.header('authorization'));
      requireType(c, SDP);
      const offer = await boundedText(c, SDP_BOUNDS.bytes);
      const { session, answer } = await open(endpoint, offer);
      const location = `/${kind}/${endpoint.id}/sessions/${session.id}`;
      c.header('Location', location);
      c.header('ETag', session.etag);
      c.header('Accept-Patch', SDPFRAG);
      for (const link of iceServerLinks(deps.turn, session.transportId)) c.header('Link', link, { append: true });
      c.header('Content-Type', SDP);
      return c.body(answer, 201);
    })
    .patch('/:id/sessions/:sessionId', async (c) => {
      const endpoint = media.authorizeEndpoint(kind, c.req.param('id'), c.req.header('authorization'));
      requireType(c, SDPFRAG);
      const fragment = await boundedText(c, SDP_BOUNDS.fragmentBytes);
      const result = await media.patchSession(endpoint, c.req.param('sessionId'), c.req.header('if-match'), fragment);
      c.header('ETag', result.session.etag);
      if (result.fragment === undefined) return c.body(null, 204);
      c.header('Content-Type', SDPFRAG);
      return c.body(result.fragment, 200);
    })
    .delete('/:id/sessions/:sessionId', (c) => {
      const endpoint = media.authorizeEndpoint(kind, c.req.param('id'), c.req.header('authorization'));
      media.endSession(endpoint, c.req.param('sessionId'));
      return c.body(null, 200);
    });
}

/**
 * The public WHIP and WHEP routes (mounted at `/` on the public listener).
 * @example app.route('/', whipPublicRoutes({ media, turn }))
 */
export function whipPublicRoutes(deps: PublicDeps) {
  const app = new Hono<AppEnv>();
  for (const path of WHIP_PATHS) {
    app.use(
      `${path}/*`,
      cors({
        origin: '*',
        allowMethods: ['POST', 'PATCH', 'DELETE', 'OPTIONS'],
        allowHeaders: ['Authorization', 'Content-Type', 'If-Match'],
        exposeHeaders: ['Location', 'ETag', 'Link', 'Accept-Patch', 'Accept-Post'],
        maxAge: 600,
      }),
    );
  }
  return app.route('/whip', endpointRoutes('whip', deps)).route('/whep', endpointRoutes('whep', deps));
}

/** The error shape of /whip and /whep: a status and a line of text (never the internal details). */
export function whipErrorScopes(logger: Logger): ErrorScope[] {
  const onError = (error: unknown, c: Context<AppEnv>) => {
    c.header('Content-Type', 'text/plain; charset=utf-8');
    if (error instanceof WhipRefusal) return c.body(`${error.message}\n`, error.status as never);
    if (error instanceof RelayError && error.status < 500) return c.body(`${error.message}\n`, error.status as never);
    logger.error({ err: error, path: c.req.path }, 'WHIP/WHEP request failed');
    return c.body('the media engine failed\n', 500);
  };
  const notFound = (c: Context<AppEnv>, allowed: string[]) => {
    c.header('Content-Type', 'text/plain; charset=utf-8');
    if (allowed.length > 0) {
      c.header('Allow', [...allowed, 'OPTIONS'].join(', '));
      return c.body('method not allowed\n', 405);
    }
    return c.body('not found\n', 404);
  };
  return WHIP_PATHS.map((scope) => ({ scope, onError, notFound }));
}

/** The public document's operations of /whip and /whep (SDP in and out: not generated from zod routes). */
export function whipDocumentPaths(): Record<string, Record<string, unknown>> {
  const text = (description: string) => ({ description, content: { 'text/plain': { schema: { type: 'string', maxLength: 1024 } } } });
  const refusals = {
    '400': text('unparsable SDP, or an offer over the bounds (64 KiB, 2,000 lines, 16 media sections, 64 candidates, 256 attributes per section)'),
    '401': text('Authorization missing, wrong token or expired token'),
    '404': text('unknown or revoked endpoint, or unknown session'),
    '429': text('WHIP_MAX_SESSIONS_PER_ENDPOINT / WHEP_MAX_SESSIONS_PER_ENDPOINT sessions open, or the router holds its cap of transports'),
    '500': text('the media engine failed'),
  };
  const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 64 } };
  const sessionParam = { name: 'sessionId', in: 'path', required: true, schema: { type: 'string', maxLength: 64 } };
  const bearer = [{ whipBearer: [] }];
  const paths: Record<string, Record<string, unknown>> = {};
  for (const kind of ['whip', 'whep'] as const) {
    const what = kind === 'whip' ? 'Publish (WHIP, RFC 9725): the offer\'s sending audio and video sections become producers of the room' : "Play (WHEP): the endpoint's producers are sent in the offer's receiving sections";
    const tags = [kind];
    paths[`/${kind}/{id}`] = {
      post: {
        operationId: `${kind}Offer`,
        summary: what,
        tags,
        security: bearer,
        parameters: [idParam],
        requestBody: { required: true, content: { [SDP]: { schema: { type: 'string', maxLength: SDP_BOUNDS.bytes } } } },
        responses: {
          '201': {
            description: 'the answer; Location names the session, ETag its state, Link one TURN server each (rel="ice-server") when TURN is configured',
            headers: {
              Location: { schema: { type: 'string' } },
              ETag: { schema: { type: 'string' } },
              Link: { schema: { type: 'string' } },
              'Accept-Patch': { schema: { type: 'string' } },
            },
            content: { [SDP]: { schema: { type: 'string' } } },
          },
          ...refusals,
          '415': text('Content-Type is not application/sdp'),
          '422': text('no media section the room\'s codecs can carry'),
          '503': text('the relay is draining, or (WHEP) no RTC port is left for the session\'s pipe transports'),
        },
      },
      options: { operationId: `${kind}Options`, summary: 'CORS preflight (any origin); Accept-Post: application/sdp', tags, parameters: [idParam], responses: { '204': { description: 'allowed' } } },
    };
    paths[`/${kind}/{id}/sessions/{sessionId}`] = {
      patch: {
        operationId: `${kind}SessionPatch`,
        summary: 'Trickle ICE candidates or restart ICE (a new ice-ufrag/ice-pwd); If-Match must carry the ETag',
        tags,
        security: bearer,
        parameters: [idParam, sessionParam, { name: 'If-Match', in: 'header', required: true, schema: { type: 'string', maxLength: 256 } }],
        requestBody: { required: true, content: { [SDPFRAG]: { schema: { type: 'string', maxLength: SDP_BOUNDS.fragmentBytes } } } },
        responses: {
          '200': { description: "ICE restarted: the relay's new ufrag, pwd and candidates; a new ETag", content: { [SDPFRAG]: { schema: { type: 'string' } } } },
          '204': { description: 'candidates taken' },
          ...refusals,
          '412': text('If-Match does not name the session\'s current ETag'),
          '415': text('Content-Type is not application/trickle-ice-sdpfrag'),
          '428': text('If-Match is missing'),
        },
      },
      delete: {
        operationId: `${kind}SessionDelete`,
        summary: 'End the session (its transport, and the producers or consumers on it, close)',
        tags,
        security: bearer,
        parameters: [idParam, sessionParam],
        responses: { '200': { description: 'ended' }, '401': refusals['401'], '404': refusals['404'] },
      },
    };
  }
  return paths;
}
