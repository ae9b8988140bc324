// The webhook's parked batches: the contract's routes (contract/webhook.ts) -> the relay's events (events/index.ts).
import { listWebhookDeliveries, redeliverWebhookDelivery } from '../contract/webhook.js';
import { conflict, RelayError } from '../errors.js';
import type { WebhookDeliveries } from '../events/index.js';
import { relayRouter } from './router.js';

export function webhookRoutes(deliveries: WebhookDeliveries) {
  return relayRouter()
    .openapi(listWebhookDeliveries, async (c) => c.json({ deliveries: await deliveries.list(c.req.valid('query')) }, 200))
    .openapi(redeliverWebhookDelivery, async (c) => {
      const { id } = c.req.valid('param');
      const asked = await deliveries.redeliver(id);
      if (asked === 'unknown') throw new RelayError('NOT_FOUND', `delivery not found: ${id.slice(0, 100)}`, { resource: 'delivery', id: id.slice(0, 100) });
      if (asked === 'not_failed') throw conflict('the batch is not parked (asked to be sent again already, or delivered)', { id });
      return c.json(asked, 202);
    });
}
