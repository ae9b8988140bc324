// Building blocks of the relay's OpenAPI operations. Each <resource>.routes.ts describes its own
// operations beside its routes; http/openapi.ts assembles them; src/docs/openapi.ts renders the document.
import { z } from 'zod';
import type { Operation } from '../../docs/openapi.js';

export type RelayOperation = Operation;
/** An error an operation can answer with: [code, HTTP status, meaning]. */
export type ErrorRow = [string, number, string];

export const anyObject = z.record(z.string(), z.unknown());
export const timeString = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/).describe('yyyy-MM-dd HH:mm:ss, Asia/Shanghai');

export const VALIDATION: ErrorRow = ['VALIDATION_ERROR', 400, 'body fails its schema, malformed JSON, or the engine rejects its content; details.issues'];
export const notFoundDoc = (what: string): ErrorRow => ['NOT_FOUND', 404, `${what} not found; details {resource, id}`];
