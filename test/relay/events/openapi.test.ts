import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventStreamPath, eventWebhooks } from '../../../src/relay/events/openapi.js';
import { EVENT_TYPES } from '../../../src/relay/contract/events.js';

describe('event OpenAPI fragments', () => {
  it('make a valid OpenAPI 3.1 document with the stream path and the webhook', async () => {
    const doc = {
      openapi: '3.1.0',
      info: { title: 'events', version: '0.0.0' },
      paths: eventStreamPath({ type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } }),
      webhooks: eventWebhooks(),
    };
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const text = JSON.stringify(doc);
    for (const type of [...EVENT_TYPES, 'resync']) expect(text).toContain(`"const":"${type}"`);
    expect(Object.keys(doc.paths['/internal/v1/events'].get.responses)).toEqual(['200', '400', '503']);
    expect(text).not.toContain('"const":"auth.'); // the relay alone documents only its own events
  });

  it("document another area's catalog on the stream and the webhook when the bus carries it", async () => {
    const schema = z.object({ id: z.string(), time: z.string(), type: z.literal('other.thing'), userId: z.int() });
    const others = [{ types: ['other.thing'], schema }];
    const doc = { openapi: '3.1.0', info: { title: 'events', version: '0.0.0' }, paths: eventStreamPath(undefined, others), webhooks: eventWebhooks(others) };
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    const stream = JSON.stringify(doc.paths['/internal/v1/events'].get.responses[200]);
    const webhook = JSON.stringify(doc.webhooks.relayEvents.post.requestBody);
    for (const text of [stream, webhook]) for (const type of [...EVENT_TYPES, 'other.thing']) expect(text).toContain(`"const":"${type}"`);
    expect(stream).toContain('"const":"resync"');
    expect(webhook).not.toContain('"const":"resync"');
    expect(doc.paths['/internal/v1/events'].get.description).toContain('other.thing');
  });
});
