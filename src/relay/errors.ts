// The relay's error object `{code, message, details?}`: codes, their statuses and the common
// constructors. Shared by ops, registry and HTTP; knows nothing of Hono or of the engine.
import { InternalError } from '../http/internal-errors.js';
import type { ResourceKind } from './registry/kinds.js';

/** Every code the relay answers with: the type, the OpenAPI enum and the typed client's check read this. */
export const RELAY_ERROR_CODES = [
  'VALIDATION_ERROR',
  'UNAUTHORIZED',
  'NOT_FOUND',
  'CONFLICT',
  'ROUTER_LIMIT_EXCEEDED',
  'DRAINING',
  'ROUTER_CAPACITY_EXCEEDED',
  'STREAM_LIMIT_EXCEEDED',
  'CAN_NOT_CONSUME',
  'MEDIASOUP_ERROR',
  'INTERNAL_ERROR',
] as const;

export type RelayErrorCode = (typeof RELAY_ERROR_CODES)[number];

const statusOf = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  CONFLICT: 409,
  ROUTER_LIMIT_EXCEEDED: 503,
  // The relay is on its way out (SIGTERM or POST /internal/v1/drain): create the room on another relay.
  DRAINING: 503,
  // The caller's own room is full, not the service: 429 (as a quota), the other rooms go on; freeing
  // resources in that room, not waiting, is what lets the next creation through.
  ROUTER_CAPACITY_EXCEEDED: 429,
  STREAM_LIMIT_EXCEEDED: 503,
  CAN_NOT_CONSUME: 400,
  MEDIASOUP_ERROR: 500,
  INTERNAL_ERROR: 500,
} as const satisfies Record<RelayErrorCode, number>;

export type RelayErrorStatus = (typeof statusOf)[RelayErrorCode];

export interface RelayErrorBody {
  code: RelayErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** An error of the relay: an InternalError whose code is one of the relay's, its status from the table. */
export class RelayError extends InternalError {
  declare readonly code: RelayErrorCode;
  declare readonly status: RelayErrorStatus;
  constructor(code: RelayErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, statusOf[code], message, details);
    this.name = 'RelayError';
  }

  override toBody(): RelayErrorBody {
    return super.toBody() as RelayErrorBody;
  }
}

/** `route` names an unknown path (`GET /internal/nope`), every other value a resource kind. */
export function notFound(resource: ResourceKind | 'route', id: string): RelayError {
  return new RelayError('NOT_FOUND', `${resource} not found: ${id}`, { resource, id });
}

export type { ValidationIssue } from '../http/internal-errors.js';
import type { ValidationIssue } from '../http/internal-errors.js';

export function validationError(issues: ValidationIssue[], message = 'invalid request body'): RelayError {
  return new RelayError('VALIDATION_ERROR', message, { issues });
}

export function conflict(message: string, details: Record<string, unknown>): RelayError {
  return new RelayError('CONFLICT', message, details);
}
