// The operation list of the generated OpenAPI documents, as test/docs/operations.snapshot.txt keeps it:
// one `<document> METHOD path statuses` line per operation, sorted. `public` is the public document;
// `internal` the internal document's operations that stay when the relay is not composed (the audit
// trail, the users, the metrics, the document itself); `relay` the ones the relay adds to it.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { TestApp } from '../support/app.js';

export const SNAPSHOT_FILE = fileURLToPath(new URL('./operations.snapshot.txt', import.meta.url));

const HEADER = [
  '# The operations of the generated OpenAPI documents, one `<document> METHOD path statuses` line each, sorted.',
  '# public: the public document. internal: the internal document without the relay composed. relay: what the',
  '# relay adds to the internal document. Compared by test/docs/operations.test.ts; after a reviewed change to',
  '# the API, refresh it with: UPDATE_SNAPSHOT=1 npx vitest run test/docs/operations.test.ts --project pglite',
];

export type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
export type Section = 'public' | 'internal' | 'relay';

/** `METHOD path statuses` of every operation of a document, sorted. */
export function operations(doc: Doc): string[] {
  const list: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) list.push(`${method.toUpperCase()} ${path} ${Object.keys(op.responses).sort().join(',')}`);
  }
  return list.sort();
}

/** `METHOD path` of an operation line. */
export const keyOf = (line: string): string => line.split(' ').slice(0, 2).join(' ');

/** The public and internal documents of a composed app. */
export async function documents(t: TestApp): Promise<{ publicDoc: Doc; internalDoc: Doc }> {
  const pub = await t.app.request('/api/v1/openapi.json');
  const internal = await t.app.request('/internal/v1/openapi.json', { headers: { 'X-Internal-Token': t.internalToken } });
  expect([pub.status, internal.status]).toEqual([200, 200]);
  return { publicDoc: (await pub.json()) as Doc, internalDoc: (await internal.json()) as Doc };
}

/** The snapshot's lines of the documents of every area composed and of the app without the relay. */
export function snapshotLines(all: { publicDoc: Doc; internalDoc: Doc }, withoutRelay: { internalDoc: Doc }): string[] {
  const outside = new Set(operations(withoutRelay.internalDoc).map(keyOf));
  const internal = operations(all.internalDoc);
  return [
    ...operations(all.publicDoc).map((line) => `public ${line}`),
    ...internal.filter((line) => outside.has(keyOf(line))).map((line) => `internal ${line}`),
    ...internal.filter((line) => !outside.has(keyOf(line))).map((line) => `relay ${line}`),
  ];
}

/** The committed snapshot, by section (each `METHOD path statuses`, sorted). */
export function readSnapshot(): Record<Section, string[]> {
  const sections: Record<Section, string[]> = { public: [], internal: [], relay: [] };
  for (const line of readFileSync(SNAPSHOT_FILE, 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [section, ...rest] = line.split(' ');
    sections[section as Section].push(rest.join(' '));
  }
  return sections;
}

/** The snapshot's text for these lines. */
export function snapshotText(lines: readonly string[]): string {
  return [...HEADER, ...lines, ''].join('\n');
}

/** Writes the snapshot when UPDATE_SNAPSHOT=1; answers whether it did. */
export function updateSnapshot(lines: readonly string[]): boolean {
  if (process.env.UPDATE_SNAPSHOT !== '1') return false;
  writeFileSync(SNAPSHOT_FILE, snapshotText(lines));
  return true;
}
