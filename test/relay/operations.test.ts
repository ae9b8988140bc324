// The relay's operations in the internal OpenAPI document, as the hand-kept document listed them
// before the routes generated it (issue 26): every path and method, and the status codes of each.
// The document is generated from the routes now; this list is what it must keep.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { allowSlowTests } from './support.js';

allowSlowTests();

/** Operations of the internal document that other modules own (the audit trail, metrics, the document itself). */
const NOT_RELAY = new Set(['GET /internal/metrics', 'GET /internal/v1/openapi.json', 'GET /internal/v1/auth-events', 'GET /internal/docs']);

/** `METHOD path` and its response status codes, in the order the hand-kept document had them. */
const RELAY_OPERATIONS: Array<[string, number[]]> = [
  ['POST /internal/v1/routers', [201, 400, 401, 500, 503]],
  ['GET /internal/v1/routers', [200, 401, 500]],
  ['GET /internal/v1/routers/{id}', [200, 401, 404, 500]],
  ['DELETE /internal/v1/routers/{id}', [204, 401, 404, 500]],
  ['POST /internal/v1/transports', [201, 400, 401, 404, 429, 500]],
  ['POST /internal/v1/transports/{id}/connect', [200, 400, 401, 404, 409, 500]],
  ['DELETE /internal/v1/transports/{id}', [204, 401, 404, 500]],
  ['POST /internal/v1/producers', [201, 400, 401, 404, 409, 429, 500]],
  ['DELETE /internal/v1/producers/{id}', [204, 401, 404, 500]],
  ['POST /internal/v1/consumers', [201, 400, 401, 404, 409, 429, 500]],
  ['POST /internal/v1/consumers/{id}/resume', [200, 401, 404, 500]],
  ['DELETE /internal/v1/consumers/{id}', [204, 401, 404, 500]],
  ['POST /internal/v1/producers/{id}/pause', [200, 401, 404, 500]],
  ['POST /internal/v1/producers/{id}/resume', [200, 401, 404, 500]],
  ['GET /internal/v1/producers/{id}/stats', [200, 401, 404, 500]],
  ['POST /internal/v1/consumers/{id}/pause', [200, 401, 404, 500]],
  ['POST /internal/v1/consumers/{id}/preferred-layers', [200, 400, 401, 404, 409, 500]],
  ['POST /internal/v1/consumers/{id}/priority', [200, 400, 401, 404, 500]],
  ['POST /internal/v1/consumers/{id}/key-frame', [204, 401, 404, 500]],
  ['GET /internal/v1/consumers/{id}/stats', [200, 401, 404, 500]],
  ['POST /internal/v1/transports/{id}/restart-ice', [200, 401, 404, 500]],
  ['POST /internal/v1/transports/{id}/max-incoming-bitrate', [204, 400, 401, 404, 500]],
  ['GET /internal/v1/transports/{id}/stats', [200, 401, 404, 500]],
  ['POST /internal/v1/data-producers', [201, 400, 401, 404, 409, 500]],
  ['DELETE /internal/v1/data-producers/{id}', [204, 401, 404, 500]],
  ['POST /internal/v1/data-consumers', [201, 400, 401, 404, 409, 500]],
  ['DELETE /internal/v1/data-consumers/{id}', [204, 401, 404, 500]],
  ['POST /internal/v1/pipe-transports', [201, 400, 401, 404, 409, 429, 500]],
  ['POST /internal/v1/pipe-transports/{id}/connect', [200, 400, 401, 404, 409, 500]],
  ['POST /internal/v1/pipe-transports/{id}/consumers', [201, 400, 401, 404, 429, 500]],
  ['POST /internal/v1/pipe-transports/{id}/producers', [201, 400, 401, 404, 409, 429, 500]],
  ['DELETE /internal/v1/pipe-transports/{id}', [204, 401, 404, 500]],
  ['POST /internal/v1/plain-transports', [201, 400, 401, 404, 429, 500]],
  ['POST /internal/v1/plain-transports/{id}/connect', [200, 400, 401, 404, 409, 500]],
  ['DELETE /internal/v1/plain-transports/{id}', [204, 401, 404, 500]],
  ['POST /internal/v1/recordings', [201, 400, 401, 404, 409, 429, 500, 507]],
  ['GET /internal/v1/recordings', [200, 400, 401, 500]],
  ['GET /internal/v1/recordings/{id}', [200, 401, 404, 500]],
  ['DELETE /internal/v1/recordings/{id}', [200, 401, 404, 500]],
  ['GET /internal/info', [200, 401, 500]],
  // 200 added when the routes generated the document: a drain already under way answers 200 (the
  // hand-kept document named only the 202 and said so in its description).
  ['POST /internal/v1/drain', [200, 202, 401, 500]],
  ['GET /internal/v1/events', [200, 400, 503]],
  // Issue 28: TURN credentials for a signaling server.
  ['POST /internal/v1/ice-servers', [200, 400, 401, 500]],
];

type Doc = {
  info: { title: string };
  security?: unknown;
  components: { securitySchemes?: Record<string, unknown> };
  paths: Record<string, Record<string, { operationId?: string; responses: Record<string, unknown> }>>;
  webhooks?: Record<string, Record<string, unknown>>;
};

let t: TestApp;
let doc: Doc;
beforeAll(async () => {
  t = await buildTestApp({}, { areas: { accounts: false } });
  const res = await t.app.request('/internal/v1/openapi.json', { headers: { 'X-Internal-Token': t.internalToken } });
  expect(res.status).toBe(200);
  doc = (await res.json()) as Doc;
});
afterAll(() => t.close());

describe('the relay in the internal OpenAPI document', () => {
  it('lists the same operations, each with the same response status codes', () => {
    const listed = new Map<string, number[]>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const key = `${method.toUpperCase()} ${path}`;
        if (!NOT_RELAY.has(key)) listed.set(key, Object.keys(operation.responses).map(Number));
      }
    }
    expect([...listed.keys()].sort()).toEqual(RELAY_OPERATIONS.map(([key]) => key).sort());
    // Each keeps every status it had (the document may state more: what the app answers on every
    // internal path, such as the token guard's 401).
    for (const [key, statuses] of RELAY_OPERATIONS) expect(listed.get(key), key).toEqual(expect.arrayContaining(statuses));
  });

  it('keeps its title, the internal token on every path and the webhook', () => {
    expect(doc.info.title).toBe('Chat backend: internal media relay API');
    expect(doc.security).toEqual([{ internalToken: [] }]);
    expect(doc.components.securitySchemes).toEqual({ internalToken: { type: 'apiKey', in: 'header', name: 'X-Internal-Token' } });
    expect(Object.keys(doc.webhooks ?? {})).toEqual(['relayEvents']);
    expect(Object.keys(doc.webhooks!.relayEvents!)).toEqual(['post']);
  });
});
