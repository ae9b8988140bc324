import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
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
  });
});
