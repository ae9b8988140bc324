// The relay's operations for the OpenAPI document: each resource's own (beside its routes) and
// those of the internal app and the operations endpoints.
import { z } from 'zod';
import { RELAY_ERROR_CODES } from '../errors.js';
import { consumersDocs } from './consumers.routes.js';
import { controlsDocs } from './controls.routes.js';
import { dataDocs } from './data.routes.js';
import { anyObject, type ErrorRow, type RelayOperation } from './docs.js';
import { pipesDocs } from './pipes.routes.js';
import { producersDocs } from './producers.routes.js';
import { routersDocs } from './routers.routes.js';
import { transportsDocs } from './transports.routes.js';
import { infoSchema } from './views.js';

export const drainSchema = z.strictObject({
  draining: z.literal(true),
  routers: z.int().describe('routers still open'),
});

export const relayError = z.object({
  code: z.enum(RELAY_ERROR_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** Errors every relay operation can answer with. */
export const RELAY_COMMON: ErrorRow[] = [
  ['UNAUTHORIZED', 401, 'X-Internal-Token missing or wrong'],
  ['MEDIASOUP_ERROR', 500, 'the media engine failed'],
  ['INTERNAL_ERROR', 500, 'any other failure'],
];

export const relayOperations: RelayOperation[] = [
  ...routersDocs,
  ...transportsDocs,
  ...producersDocs,
  ...consumersDocs,
  ...controlsDocs,
  ...dataDocs,
  ...pipesDocs,
  {
    method: 'get',
    path: '/internal/info',
    summary: 'Workers, resource counts and limits',
    success: {
      status: 200,
      schema: infoSchema,
      description: 'service information',
    },
    errors: [],
  },
  {
    method: 'post',
    path: '/internal/v1/drain',
    summary: 'Start a drain: new routers are refused with DRAINING, open rooms go on (the process does not exit)',
    success: {
      status: 202,
      schema: drainSchema,
      description: 'drain started (200 with the same body when one was already under way)',
    },
    errors: [],
  },
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
    success: { status: 200, schema: anyObject, description: 'OpenAPI 3.1 document' },
    errors: [],
  },
];
