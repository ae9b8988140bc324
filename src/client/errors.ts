// The typed client's error: an error body of the relay, or a failure that was not one.
import type { RelayErrorCode } from './types.js';

/** Every code of the relay's error table (src/relay/contract/errors.ts), in its order. */
export const RELAY_ERROR_CODES: readonly RelayErrorCode[] = [
  'VALIDATION_ERROR',
  'UNAUTHORIZED',
  'NOT_FOUND',
  'CONFLICT',
  'ROUTER_LIMIT_EXCEEDED',
  'DRAINING',
  'ROUTER_CAPACITY_EXCEEDED',
  'STREAM_LIMIT_EXCEEDED',
  'RECORDING_CAPACITY_EXCEEDED',
  'RECORDING_STORAGE_FULL',
  'CAN_NOT_CONSUME',
  'NODE_UNREACHABLE',
  'NODE_LOST',
  'MEDIASOUP_ERROR',
  'INTERNAL_ERROR',
];

/**
 * An error body of the relay (`{code, message, details?}`) or, when the answer was not one, a
 * transport-level failure (`code` INTERNAL_ERROR, `details.body` holding what came back).
 */
export class RelayClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: RelayErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RelayClientError';
  }
}

const CODES: ReadonlySet<string> = new Set(RELAY_ERROR_CODES);

/** The RelayClientError of an answer that is not a success: its error body when it is one of the relay's. */
export async function toError(res: { status: number; text(): Promise<string> }): Promise<RelayClientError> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body && typeof body === 'object' && 'code' in body && typeof body.code === 'string' && CODES.has(body.code)) {
    const { code, message, details } = body as { code: RelayErrorCode; message?: unknown; details?: unknown };
    return new RelayClientError(
      res.status,
      code,
      typeof message === 'string' ? message : code,
      details && typeof details === 'object' ? (details as Record<string, unknown>) : undefined,
    );
  }
  return new RelayClientError(res.status, 'INTERNAL_ERROR', `relay answered HTTP ${res.status} without an error object`, { body: text.slice(0, 500) });
}
