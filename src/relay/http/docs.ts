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
/** The per-router cap of `plural` (MEDIASOUP_MAX_<PLURAL>_PER_ROUTER) reached. */
export const capacityDoc = (plural: string): ErrorRow => [
  'ROUTER_CAPACITY_EXCEEDED',
  429,
  `the router holds (or is creating) MEDIASOUP_MAX_${plural.toUpperCase()}_PER_ROUTER ${plural}; details {routerId, resource, max}`,
];
export const notFoundDoc = (what: string): ErrorRow => ['NOT_FOUND', 404, `${what} not found; details {resource, id}`];
