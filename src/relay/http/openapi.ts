// Kept only for src/docs/openapi.ts, the hand-kept document the relay no longer uses (its operations
// are generated from the routes, contract/): delete this file with that one. What it still lists were
// never the relay's operations: the metrics and the internal document (observability and docs).
import { z } from 'zod';
import { COMMON_ERRORS, RELAY_ERRORS, relayErrorSchema } from '../contract/errors.js';

/** docs/openapi.ts's Operation, as far as these use it (not imported: that would be an import circle). */
interface Operation {
  method: 'get';
  path: string;
  summary: string;
  contentType?: string;
  success: { status: number; schema: z.ZodType; description: string };
  errors: Array<[string, number, string]>;
}

export const relayError = relayErrorSchema;

export const RELAY_COMMON: Array<[string, number, string]> = COMMON_ERRORS.map((row) => [row.code, RELAY_ERRORS[row.code].status, row.meaning]);

export const relayOperations: Operation[] = [
  {
    method: 'get',
    path: '/internal/metrics',
    summary: 'Prometheus metrics (text exposition format)',
    contentType: 'text/plain',
    success: { status: 200, schema: z.string(), description: 'metrics' },
    errors: [],
  },
  {
    method: 'get',
    path: '/internal/v1/openapi.json',
    summary: 'This document',
    success: { status: 200, schema: z.record(z.string(), z.unknown()), description: 'OpenAPI 3.1 document' },
    errors: [],
  },
];
