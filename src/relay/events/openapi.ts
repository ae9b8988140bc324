// OpenAPI 3.1 fragments for the event stream (a path) and the webhook (a top-level `webhooks` entry),
// generated from the same zod schemas that type the events: the relay module's part of the internal
// document besides the operations its routes generate.
import { z } from 'zod';
import { MAX_FILTER_ROUTER_IDS, MAX_FILTER_TYPES } from '../../events/bus.js';
import { EVENT_STREAM_ERRORS, MAX_LAST_EVENT_ID_LENGTH, MAX_ROUTER_ID_LENGTH, MAX_TYPE_PATTERN_LENGTH, TYPE_PATTERN } from '../../events/sse.js';
import { relayErrorSchema } from '../contract/errors.js';
import { EVENT_TYPES, relayEventSchema, relayStreamEventSchema, resyncEvent, webhookBatchSchema } from '../contract/events.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../events/webhook.js';
import { STANDARD_ID_HEADER, STANDARD_SIGNATURE_HEADER, STANDARD_TIMESTAMP_HEADER } from '../../events/webhook-key.js';

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'output', target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

/**
 * Events of other areas that the process's one bus carries beside the relay's (the account area's
 * auth.* events, passed by src/compose.ts, the one place that knows both areas): documented on the
 * stream and the webhook with the relay's own.
 */
export interface EventCatalog {
  types: readonly string[];
  /** The catalog's events, a zod union discriminated by `type`. */
  schema: z.ZodType;
}

function streamDescription(others: readonly EventCatalog[]): string {
  const otherTypes = others.flatMap((catalog) => catalog.types);
  return [
    'Server-Sent Events: each message has `id:` (resume point), `event:` (the type) and `data:` (the event as JSON, shape below).',
    `Types: ${[...EVENT_TYPES, ...otherTypes].join(', ')}, and \`resync\` (stream only, always first).`,
    ...(otherTypes.length > 0 ? ['Events of other areas (auth.*) concern no router: a stream filtered only by routerId does not get them; ask for them with types (e.g. types=auth.*).'] : []),
    'A comment line `: heartbeat` comes every EVENTS_HEARTBEAT_S seconds; a stream opened without Last-Event-ID starts with `: cursor <id>` and `id: <id>`, and a filtered stream\'s heartbeat repeats them with its position once events of other routers went by.',
    'Reconnect with `Last-Event-ID` to receive every event after it once, in order; when that is impossible the first event is `resync`: reload GET /internal/v1/routers, then go on reading.',
    'A client that stays more than EVENTS_SUBSCRIBER_MAX_QUEUED events behind for 2 s is disconnected; it resumes with Last-Event-ID. HEAD answers the same status and headers without a body and opens no stream. See docs/events.md.',
  ].join(' ');
}

/** Every event the bus carries: the relay's and the other catalogs'. */
function busEventSchema(others: readonly EventCatalog[]): z.ZodType {
  return others.length === 0 ? relayEventSchema : z.union([relayEventSchema, ...others.map((catalog) => catalog.schema)]).describe('An event of the bus');
}

/** The stream's operation: the `paths` entry, and the error codes it adds to the relay's table. */
export function eventStreamPath(errorSchema: Record<string, unknown> = jsonSchema(relayErrorSchema), others: readonly EventCatalog[] = []) {
  const errorResponse = (code: keyof typeof EVENT_STREAM_ERRORS) => ({
    description: `${code}: ${EVENT_STREAM_ERRORS[code].meaning}`,
    content: { 'application/json': { schema: errorSchema, examples: { [code]: { value: { code, message: EVENT_STREAM_ERRORS[code].meaning } } } } },
  });
  return {
    '/internal/v1/events': {
      get: {
        summary: 'Follow the relay events (Server-Sent Events)',
        tags: ['events'],
        description: streamDescription(others),
        operationId: 'getInternalV1Events',
        parameters: [
          {
            name: 'routerId',
            in: 'query',
            required: false,
            description: `Only events of these routers (repeatable, at most ${MAX_FILTER_ROUTER_IDS}); relay-wide events always come`,
            schema: { type: 'array', maxItems: MAX_FILTER_ROUTER_IDS, items: { type: 'string', minLength: 1, maxLength: MAX_ROUTER_ID_LENGTH, pattern: '^[A-Za-z0-9_.:-]+$' } },
            style: 'form',
            explode: true,
          },
          {
            name: 'types',
            in: 'query',
            required: false,
            description: `Only events of these types (repeatable, at most ${MAX_FILTER_TYPES}): an exact type (router.closed), a prefix ending in .* (auth.*), or *; with routerId too, an event must match both`,
            schema: { type: 'array', maxItems: MAX_FILTER_TYPES, items: { type: 'string', maxLength: MAX_TYPE_PATTERN_LENGTH, pattern: TYPE_PATTERN.source } },
            style: 'form',
            explode: true,
          },
          {
            name: 'since',
            in: 'query',
            required: false,
            description: 'Resume after this event id, for a client that cannot set Last-Event-ID (the header wins when both are given)',
            schema: { type: 'string', maxLength: MAX_LAST_EVENT_ID_LENGTH },
          },
          {
            name: 'Last-Event-ID',
            in: 'header',
            required: false,
            description: `Resume after this event id, on any instance sharing the database: the durable events after it are replayed from the event log (longer than ${MAX_LAST_EVENT_ID_LENGTH} characters: never one of ours, so resync)`,
            schema: { type: 'string' },
          },
        ],
        responses: {
          200: {
            description: 'the event stream',
            content: { 'text/event-stream': { schema: jsonSchema(others.length === 0 ? relayStreamEventSchema : z.union([busEventSchema(others), resyncEvent]).describe('An event of the event stream')) } },
          },
          400: errorResponse('VALIDATION_ERROR'),
          503: errorResponse('STREAM_LIMIT_EXCEEDED'),
        },
      },
    },
  };
}

/** OpenAPI 3.1 `webhooks`: what the relay POSTs to EVENTS_WEBHOOK_URL. */
export function eventWebhooks(others: readonly EventCatalog[] = []) {
  return {
    relayEvents: {
      post: {
        summary: 'A batch of relay events, POSTed to EVENTS_WEBHOOK_URL',
        description:
          `In order, one batch at a time, retried with backoff until a 2xx answer (so a batch may arrive twice: events are unique by id). ${SIGNATURE_HEADER} is sha256=<hex> of HMAC-SHA256(EVENTS_WEBHOOK_SECRET, raw body); the signed body holds the timestamp (refuse it when far from now). The same body is also signed the Standard Webhooks way (${STANDARD_ID_HEADER}, ${STANDARD_TIMESTAMP_HEADER}, ${STANDARD_SIGNATURE_HEADER}; the key is EVENTS_WEBHOOK_SECRET's bytes, or the decoded bytes of a whsec_<base64> secret), for off-the-shelf verifiers; ${STANDARD_ID_HEADER} is the same on every retry of a batch. dropped > 0: events were lost to queue overflow just before this batch, reload state.`,
        operationId: 'relayEventsWebhook',
        parameters: [
          { name: SIGNATURE_HEADER, in: 'header', required: true, schema: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' } },
          { name: TIMESTAMP_HEADER, in: 'header', required: true, description: 'the body timestamp, unsigned copy', schema: { type: 'string' } },
          { name: STANDARD_ID_HEADER, in: 'header', required: true, description: 'the batch id, the same on each retry of the batch', schema: { type: 'string' } },
          { name: STANDARD_TIMESTAMP_HEADER, in: 'header', required: true, description: "the attempt's Unix seconds, signed (equals the body timestamp)", schema: { type: 'string', pattern: '^[0-9]+$' } },
          {
            name: STANDARD_SIGNATURE_HEADER,
            in: 'header',
            required: true,
            description: 'v1,<base64 of HMAC-SHA256(key, webhook-id.webhook-timestamp.raw body)>',
            schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]{43}=$' },
          },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(webhookBatch(busEventSchema(others))) } } },
        responses: { 200: { description: 'any 2xx acknowledges the batch; anything else (or no answer in 10 s) is retried' } },
      },
    },
  };
}

/** A webhook POST body carrying `events` (src/relay/contract/events.ts's webhookBatchSchema with the bus's events). */
function webhookBatch(events: z.ZodType) {
  return webhookBatchSchema.extend({ events: z.array(events) });
}
