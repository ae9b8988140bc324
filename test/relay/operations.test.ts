// The relay's operations in the internal OpenAPI document, generated from its routes: every path and
// method, and the status codes of each, as test/docs/operations.snapshot.txt lists them (its `relay`
// lines; how to refresh it after a reviewed change is said in test/docs/operations.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyOf, operations, readSnapshot } from '../docs/operation-list.js';
import { buildTestApp, type TestApp } from '../support/app.js';
import { allowSlowTests } from './support.js';

allowSlowTests();

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
  it('lists the operations of the snapshot, each with the same response status codes', () => {
    const snapshot = readSnapshot();
    const relay = new Set(snapshot.relay.map(keyOf));
    const listed = operations(doc);
    expect(listed.filter((line) => relay.has(keyOf(line)))).toEqual(snapshot.relay);
    // The others are the operations of the modules composed beside the relay (the audit trail, the
    // metrics, the document itself), each as the snapshot lists it.
    expect(snapshot.internal).toEqual(expect.arrayContaining(listed.filter((line) => !relay.has(keyOf(line)))));
  });

  it('keeps its title, the internal token on every path and the webhook', () => {
    expect(doc.info.title).toBe('Chat backend: internal media relay API');
    expect(doc.security).toEqual([{ internalToken: [] }]);
    expect(doc.components.securitySchemes).toEqual({ internalToken: { type: 'apiKey', in: 'header', name: 'X-Internal-Token' } });
    expect(Object.keys(doc.webhooks ?? {})).toEqual(['relayEvents']);
    expect(Object.keys(doc.webhooks!.relayEvents!)).toEqual(['post']);
  });
});
