// The relay's error object `{code, message, details?}` and the common constructors, its codes and
// statuses from the contract's one table (contract/errors.ts). Shared by ops, registry and HTTP;
// knows nothing of Hono or of the engine.
import { InternalError, type ValidationIssue } from '../http/internal-errors.js';
import { RELAY_ERRORS, type RelayErrorBody, type RelayErrorCode, type RelayErrorStatus } from './contract/errors.js';
import type { ResourceKind } from './registry/kinds.js';

export { RELAY_ERROR_CODES, type RelayErrorBody, type RelayErrorCode, type RelayErrorStatus } from './contract/errors.js';
export type { ValidationIssue } from '../http/internal-errors.js';

/** An error of the relay: an InternalError whose code is one of the relay's, its status from the table. */
export class RelayError extends InternalError {
  declare readonly code: RelayErrorCode;
  declare readonly status: RelayErrorStatus;
  constructor(code: RelayErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, RELAY_ERRORS[code].status, message, details);
    this.name = 'RelayError';
  }

  override toBody(): RelayErrorBody {
    return super.toBody() as RelayErrorBody;
  }
}

/** `route` names an unknown path (`GET /internal/nope`), every other value a resource kind. */
/** `resource`: an id that no kind of this node holds (GET /v1/cluster/resources/{id}). */
export function notFound(resource: ResourceKind | 'route' | 'recording' | 'resource', id: string): RelayError {
  return new RelayError('NOT_FOUND', `${resource} not found: ${id}`, { resource, id });
}

export function validationError(issues: ValidationIssue[], message = 'invalid request body'): RelayError {
  return new RelayError('VALIDATION_ERROR', message, { issues });
}

export function conflict(message: string, details: Record<string, unknown>): RelayError {
  return new RelayError('CONFLICT', message, details);
}
