// The relay's error object `{code, message, details?}` and the mapping of anything thrown under /internal.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import * as mediasoup from 'mediasoup';
import type { Logger } from '../logger.js';

export type RelayErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'ROUTER_LIMIT_EXCEEDED'
  | 'CAN_NOT_CONSUME'
  | 'MEDIASOUP_ERROR'
  | 'INTERNAL_ERROR';

const statusOf: Record<RelayErrorCode, ContentfulStatusCode> = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  CONFLICT: 409,
  ROUTER_LIMIT_EXCEEDED: 503,
  CAN_NOT_CONSUME: 400,
  MEDIASOUP_ERROR: 500,
  INTERNAL_ERROR: 500,
};

export interface RelayErrorBody {
  code: RelayErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export class RelayError extends Error {
  readonly status: ContentfulStatusCode;
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

export type ResourceKind = 'router' | 'transport' | 'producer' | 'consumer' | 'route';

export function notFound(resource: ResourceKind, id: string): RelayError {
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

/** mediasoup 3.11's RtpListener: "ssrc|RTX ssrc|MID|RID already exists in RTP listener …". */
const RTP_LISTENER_CLASH = /already exists in RTP listener/;

/**
 * Maps a failure of a mediasoup call: the engine throws TypeError/UnsupportedError when the
 * request's content is invalid (the caller's fault, 400); anything else is the engine failing (500).
 * The engine's own message is logged by the caller, never sent for a 500.
 */
export function fromEngineError(error: unknown, operation: string): RelayError {
  if (error instanceof RelayError) return error;
  if (error instanceof TypeError || error instanceof mediasoup.types.UnsupportedError) {
    return validationError([{ path: '', message: error.message }], `media engine rejected the request: ${operation}`);
  }
  // The worker refuses a producer whose ssrc, RTX ssrc, MID (or RID without a MID) another producer
  // of the transport already uses, as a plain Error: the request clashes with the transport's state.
  if (error instanceof Error && RTP_LISTENER_CLASH.test(error.message)) {
    return conflict(`media engine refused the request: ${operation}: an ssrc, MID or RID is already in use on this transport`, {
      reason: error.message.replace(/\s*\[method:[^\]]*\]\s*$/, ''),
    });
  }
  return new RelayError('MEDIASOUP_ERROR', `media engine failed: ${operation}`);
}

export function toRelayError(error: unknown): RelayError | undefined {
  if (error instanceof RelayError) return error;
  if (error instanceof HTTPException) {
    if (error.status === 413) return new RelayError('VALIDATION_ERROR', 'request body too large', { issues: [{ path: '', message: 'body too large' }] });
    if (error.status === 400) return validationError([{ path: '', message: 'malformed JSON' }], 'request body is not valid JSON');
    if (error.status === 401) return new RelayError('UNAUTHORIZED', 'missing or invalid internal token');
  }
  return undefined;
}

export function handleRelayError(error: unknown, c: Context, logger: Logger) {
  const known = toRelayError(error);
  if (known) return c.json(known.toBody(), known.status);
  logger.error({ err: error, requestId: c.get('requestId') }, 'unhandled error in media relay API');
  return c.json({ code: 'INTERNAL_ERROR', message: 'internal error' } satisfies RelayErrorBody, 500);
}
