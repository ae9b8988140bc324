// The relay's error object `{code, message, details?}`: codes, their statuses and the common
// constructors. Shared by ops, registry and HTTP; knows nothing of Hono or of the engine.
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

export class RelayError extends Error {
  readonly status: RelayErrorStatus;
  constructor(
    readonly code: RelayErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RelayError';
    this.status = statusOf[code];
  }

  toBody(): RelayErrorBody {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

/** `route` names an unknown path (`GET /internal/nope`), every other value a resource kind. */
export function notFound(resource: ResourceKind | 'route', id: string): RelayError {
  return new RelayError('NOT_FOUND', `${resource} not found: ${id}`, { resource, id });
}

export interface ValidationIssue {
  path: string;
  message: string;
}

export function validationError(issues: ValidationIssue[], message = 'invalid request body'): RelayError {
  return new RelayError('VALIDATION_ERROR', message, { issues });
}

export function conflict(message: string, details: Record<string, unknown>): RelayError {
  return new RelayError('CONFLICT', message, details);
}
