// The webhook's parked batches: what it gave up on after EVENTS_WEBHOOK_GIVE_UP_S of failures, listed
// and sent again on request (docs/events.md "Parked deliveries").
import { z } from 'zod';
import { errorRow, notFoundRow, VALIDATION } from './errors.js';
import { relayRoute } from './route.js';

export const MAX_DELIVERIES_PAGE = 500;

export const listWebhookDeliveriesQuery = z.object({
  status: z.enum(['failed']).default('failed').describe('failed: parked after EVENTS_WEBHOOK_GIVE_UP_S of failures, not sent again since'),
  limit: z.coerce.number().int().min(1).max(MAX_DELIVERIES_PAGE).default(100).describe('batches at most, oldest first'),
});

export const webhookDeliverySchema = z.object({
  id: z.string().describe("the batch's webhook-id, the same when it is sent again"),
  firstEventId: z.string().describe('the id of its first event'),
  lastEventId: z.string().describe('the id of its last event'),
  events: z.int().min(0).describe('events it carries'),
  attempts: z.int().min(0).describe('POSTs tried'),
  lastError: z.string().describe('why the last one failed (`HTTP 500`, `ECONNREFUSED 10.0.0.5:443`, ...)'),
  parkedAt: z.string().describe('when it was parked (ISO 8601)'),
});

export const webhookDeliveryListSchema = z.object({ deliveries: z.array(webhookDeliverySchema) });

export const listWebhookDeliveries = relayRoute({
  method: 'get',
  path: '/v1/webhook/deliveries',
  summary: 'Webhook batches parked as failed (EVENTS_WEBHOOK_GIVE_UP_S of failures), oldest first',
  query: listWebhookDeliveriesQuery,
  success: { 200: { description: 'the parked batches', schema: webhookDeliveryListSchema } },
  errors: [VALIDATION],
});

export const redeliverWebhookDelivery = relayRoute({
  method: 'post',
  path: '/v1/webhook/deliveries/{id}/redeliver',
  summary: 'Send a parked batch again, with the same events and webhook-id (by the instance that delivers, within a second or so)',
  success: { 202: { description: 'the batch, to be sent again', schema: webhookDeliverySchema } },
  errors: [notFoundRow('delivery'), errorRow('CONFLICT', 'the batch is not parked: asked to be sent again already, or delivered since; details {id}')],
});
