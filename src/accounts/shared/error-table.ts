// The account API's error responses, from the ONE error table (src/accounts/vocabulary.ts, assembled
// from the features' rows): the routes declare their error responses from it (so the OpenAPI
// document does), the /api error handler answers from it, tests read it.
import { z } from 'zod';
import { ACCOUNT_ERRORS, type AccountErrorKind, type AccountErrorRow } from '../vocabulary.js';

export { ACCOUNT_ERRORS, ApiCode, type AccountErrorKind, type AccountErrorRow } from '../vocabulary.js';

/** Every answer but a success: a non-zero code, a message, no data. */
export const errorEnvelope = z.strictObject({ code: z.int().describe('non-zero error code'), message: z.string(), data: z.null() });

/** The envelope of a status some of whose failures carry data (2006's `until`). */
const errorEnvelopeWith = (data: z.ZodType) => z.strictObject({ code: z.int().describe('non-zero error code'), message: z.string(), data: z.union([data, z.null()]) });

/** An error response a route declares: a kind of the table, or a kind with what it means on that route. */
export type ErrorRow = AccountErrorKind | readonly [AccountErrorKind, string];

/**
 * The error responses of a route for createRoute's `responses`, grouped by status, each status
 * described by its codes and meanings, with one example per code.
 * @example errorResponses(['invalid_request', 'username_taken', ['email_taken', 'e-mail already registered']])
 */
export function errorResponses(rows: readonly ErrorRow[]) {
  const byStatus = new Map<number, Array<{ code: number; meaning: string; data?: z.ZodType }>>();
  for (const row of rows) {
    const [kind, meaning] = typeof row === 'string' ? [row, undefined] : row;
    const entry: AccountErrorRow = ACCOUNT_ERRORS[kind];
    byStatus.set(entry.status, [...(byStatus.get(entry.status) ?? []), { code: entry.code, meaning: meaning ?? entry.meaning, ...(entry.data ? { data: entry.data } : {}) }]);
  }
  const responses: Record<number, { description: string; content: { 'application/json': { schema: z.ZodType; examples: Record<string, { value: unknown }> } } }> = {};
  for (const [status, list] of byStatus) {
    const data = list.find((entry) => entry.data)?.data;
    responses[status] = {
      description: list.map(({ code, meaning }) => `${code}: ${meaning}`).join('; '),
      content: {
        'application/json': {
          schema: data ? errorEnvelopeWith(data) : errorEnvelope,
          examples: Object.fromEntries(list.map(({ code, meaning }) => [String(code), { value: { code, message: meaning, data: null } }])),
        },
      },
    };
  }
  return responses;
}

/**
 * errorResponses as a module's document part states them (the document's own JSON, not schemas
 * for a route to generate from): for the responses every operation of a surface may give.
 */
export function errorResponsesAsJson(rows: readonly ErrorRow[]): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(errorEnvelope, { io: 'output', target: 'draft-2020-12' }) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(errorResponses(rows)).map(([status, response]) => [status, { ...response, content: { 'application/json': { ...response.content['application/json'], schema } } }]),
  );
}
