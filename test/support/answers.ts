// Every JSON answer a test app gives through `app.request` is checked against the OpenAPI document
// the app serves: the operation its method and path match, the response of its status, and that
// response's JSON schema (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses). Collected per test file and
// asserted after it (test/support/setup-answers.ts), so every test of the suite is also a test of
// the documents.
//
// Ajv, its formats and the document builder are loaded by checkAnswers() only when something was
// recorded: every test file runs the check (setup-answers.ts), most of those without a test app
// would otherwise pay their import.
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import type { App } from '../../src/app.js';
import type { OpenApiDocument } from '../../src/docs/document.js';
import type { Module, Surface } from '../../src/http/module.js';

interface Recorded {
  method: string;
  path: string;
  status: number;
  body: Promise<unknown>;
  modules: readonly Module[];
}

const recorded: Recorded[] = [];

export interface AnswerReport {
  /** Answers whose body was validated against a documented schema. */
  checked: number;
  /** Answers to paths no operation of either document matches (unknown routes: 404/405 by design). */
  unmatched: number;
  failures: string[];
}

/**
 * Wraps `app.request` so each JSON answer is recorded with the documents of `modules` (built once).
 * @example const app = watchAnswers(composition.app(), composition.modules)
 */
export function watchAnswers(app: App, modules: readonly Module[]): App {
  const request = app.request.bind(app);
  app.request = (async (input: string | Request | URL, init?: RequestInit, ...rest: unknown[]) => {
    const response = await (request as (...args: unknown[]) => Promise<Response>)(input, init, ...rest);
    const type = response.headers.get('content-type') ?? '';
    if (type.startsWith('application/json')) {
      const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, 'http://localhost');
      const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
      recorded.push({ method, path: url.pathname, status: response.status, body: response.clone().json().catch(() => undefined), modules });
    }
    return response;
  });
  return app;
}

/** Checks and forgets what was recorded so far. */
export async function checkAnswers(): Promise<AnswerReport> {
  const report: AnswerReport = { checked: 0, unmatched: 0, failures: [] };
  const answers = recorded.splice(0);
  if (answers.length === 0) return report;
  const [{ Ajv2020 }, { default: addFormatsModule }, { buildDocument }] = await Promise.all([import('ajv/dist/2020.js'), import('ajv-formats'), import('../../src/docs/document.js')]);
  // ajv-formats is CommonJS with a default export.
  const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
  // The documents of each app's modules, built once.
  const documents = new Map<readonly Module[], Record<Surface, OpenApiDocument>>();
  const validators = new Map<OpenApiDocument, Map<string, ValidateFunction>>();
  for (const answer of answers) {
    let docs = documents.get(answer.modules);
    if (!docs) documents.set(answer.modules, (docs = { public: buildDocument('public', answer.modules), internal: buildDocument('internal', answer.modules) }));
    const found = findOperation(docs, answer.method, answer.path);
    if (!found) {
      report.unmatched += 1;
      continue;
    }
    const { doc, template, operation } = found;
    const where = `${answer.method} ${template} → ${answer.status}`;
    const responses = (operation.responses ?? {}) as Record<string, { content?: Record<string, { schema?: unknown }> }>;
    const response = responses[String(answer.status)] ?? responses[`${String(answer.status)[0]}XX`] ?? responses.default;
    if (!response) {
      report.failures.push(`${where}: status not documented (documented: ${Object.keys(responses).join(', ')})`);
      continue;
    }
    const schema = response.content?.['application/json']?.schema;
    if (!schema) {
      report.failures.push(`${where}: answered JSON, documented without a JSON schema`);
      continue;
    }
    let byKey = validators.get(doc);
    if (!byKey) validators.set(doc, (byKey = new Map()));
    const key = `${answer.method} ${template} ${answer.status}`;
    let validate = byKey.get(key);
    if (!validate) {
      const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
      addFormats(ajv);
      // The response schema inside a copy of the document's components, so `#/components/...` resolves.
      validate = ajv.compile({ ...(schema), components: doc.components });
      byKey.set(key, validate);
    }
    const body = await answer.body;
    report.checked += 1;
    if (!validate(body)) {
      const error = validate.errors?.[0];
      report.failures.push(`${where}: ${error?.instancePath || '(root)'} ${error?.message ?? 'invalid'} — body ${JSON.stringify(body).slice(0, 300)}`);
    }
  }
  return report;
}

function findOperation(docs: Record<Surface, OpenApiDocument>, method: string, path: string) {
  for (const doc of [docs.public, docs.internal]) {
    for (const [template, item] of Object.entries(doc.paths)) {
      if (!matches(template, path)) continue;
      const operation = (item as Record<string, { responses?: unknown }>)[method.toLowerCase()] ?? (method === 'HEAD' ? (item as Record<string, { responses?: unknown }>).get : undefined);
      if (operation) return { doc, template, operation };
    }
  }
  return undefined;
}

function matches(template: string, path: string): boolean {
  const t = template.split('/');
  const p = path.split('/');
  return t.length === p.length && t.every((segment, i) => /^\{[^}]+\}$/.test(segment) || segment === p[i]);
}
