// The operations of the generated OpenAPI documents, each with the status codes of its responses,
// compared with the committed list test/docs/operations.snapshot.txt (see test/docs/operation-list.ts
// for its format): a change to the API shows as one reviewed diff of that file. After such a change,
// refresh it with
//   UPDATE_SNAPSHOT=1 npx vitest run test/docs/operations.test.ts --project pglite
// and review `git diff test/docs/operations.snapshot.txt`.
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { documents, operations, readSnapshot, SNAPSHOT_FILE, snapshotLines, snapshotText, updateSnapshot, type Doc } from './operation-list.js';

let all: TestApp;
let withoutRelay: TestApp;
beforeAll(async () => {
  all = await buildTestApp();
  withoutRelay = await buildTestApp({}, { areas: { relay: false } });
});
afterAll(async () => {
  await all?.close();
  await withoutRelay?.close();
});

describe('the operation list', () => {
  it('equals the committed snapshot', async () => {
    const lines = snapshotLines(await documents(all), await documents(withoutRelay));
    if (updateSnapshot(lines)) return;
    expect(
      snapshotText(lines),
      `the operations differ from ${SNAPSHOT_FILE}; if the change is meant, run UPDATE_SNAPSHOT=1 npx vitest run test/docs/operations.test.ts --project pglite and review the diff`,
    ).toBe(readFileSync(SNAPSHOT_FILE, 'utf8'));
  });

  it('states the body limit (413) on every account operation and the not-ready answer (503) of /readyz', () => {
    const { public: pub } = readSnapshot();
    for (const line of pub.filter((l) => l.split(' ')[1]!.startsWith('/api/v1/auth/'))) expect(line.split(' ')[2]!.split(','), line).toContain('413');
    expect(pub.find((l) => l.startsWith('GET /readyz '))?.split(' ')[2]!.split(',')).toContain('503');
  });
});

describe('the documents of every area composed', () => {
  it('list the public operations of the snapshot, with the same response statuses', async () => {
    const { publicDoc } = await documents(all);
    expect(operations(publicDoc)).toEqual(readSnapshot().public);
  });

  it('list the internal operations of the snapshot, the relay and the others, with the same response statuses', async () => {
    const { internalDoc } = await documents(all);
    const snapshot = readSnapshot();
    expect(operations(internalDoc)).toEqual([...snapshot.internal, ...snapshot.relay].sort());
  });

  // Swagger UI groups operations by tag; an untagged one lands under "default".
  it('group every operation under the tag of its resource', async () => {
    const { publicDoc, internalDoc } = await documents(all);
    const tagsOf = (doc: Doc) => {
      const byTag: Record<string, number> = {};
      for (const ops of Object.values(doc.paths)) {
        for (const op of Object.values(ops) as Array<{ tags?: string[] }>) {
          expect(op.tags?.length).toBe(1);
          byTag[op.tags![0]!] = (byTag[op.tags![0]!] ?? 0) + 1;
        }
      }
      return Object.keys(byTag).sort();
    };
    expect(tagsOf(publicDoc)).toEqual(['account', 'docs', 'e-mail', 'ice-servers', 'keys', 'observability', 'oidc', 'passkeys', 'password', 'profile', 'session', 'sessions', 'two-factor', 'whep', 'whip']);
    expect(tagsOf(internalDoc)).toEqual(
      ['audit', 'tokens', 'users', 'cluster', 'consumers', 'data-consumers', 'data-producers', 'docs', 'events', 'ice-servers', 'observability', 'pipe-transports', 'plain-transports', 'producers', 'recordings', 'routers', 'service', 'transports', 'webhook', 'whep-endpoints', 'whip-endpoints'].sort(),
    );
    const tagOf = (doc: Doc, method: string, path: string) => (doc.paths[path]![method] as { tags?: string[] }).tags;
    expect(tagOf(internalDoc, 'post', '/internal/v1/consumers/{id}/pause')).toEqual(['consumers']);
    expect(tagOf(internalDoc, 'post', '/internal/v1/drain')).toEqual(['service']);
    expect(tagOf(publicDoc, 'post', '/api/v1/auth/login')).toEqual(['session']);
  });
});

describe('the documents without the relay (generated from the routes alone)', () => {
  it('list the public operations of the snapshot, with the same response statuses', async () => {
    const { publicDoc } = await documents(withoutRelay);
    // The relay's public operations (WHIP and WHEP) are the snapshot's only public lines it adds.
    expect(operations(publicDoc)).toEqual(readSnapshot().public.filter((line) => !/ \/(whip|whep)\//.test(line)));
  });

  it('list the internal operations of the snapshot outside the relay, with the same response statuses', async () => {
    const { internalDoc } = await documents(withoutRelay);
    expect(operations(internalDoc)).toEqual(readSnapshot().internal);
  });

  it('are valid OpenAPI 3.1', async () => {
    const { publicDoc, internalDoc } = await documents(withoutRelay);
    for (const doc of [publicDoc, internalDoc]) {
      const result = await new Validator().validate(doc);
      expect(result.errors ?? []).toEqual([]);
    }
  });

  it('name every operation as the hand-kept documents did', async () => {
    const { publicDoc, internalDoc } = await documents(withoutRelay);
    const ids = [publicDoc, internalDoc].flatMap((doc) => Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => (op as { operationId?: string }).operationId)));
    expect(ids).toEqual(expect.arrayContaining(['postApiV1AuthLogin', 'deleteApiV1AuthSessionsId', 'getHealthz', 'getInternalV1AuthEvents', 'getInternalMetrics']));
    expect(new Set(ids).size).toBe(ids.length);
  });
});
