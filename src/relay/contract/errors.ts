// The relay's one table of error codes: each code's HTTP status and what it means. RelayError takes
// its status from here, the OpenAPI document its responses and examples, the typed client its check.
import { z } from 'zod';

export const RELAY_ERRORS = {
  VALIDATION_ERROR: { status: 400, meaning: 'body fails its schema, malformed JSON, or the engine rejects its content; details.issues' },
  UNAUTHORIZED: { status: 401, meaning: 'X-Internal-Token missing or wrong' },
  NOT_FOUND: { status: 404, meaning: 'no such resource; details {resource, id}' },
  CONFLICT: { status: 409, meaning: 'the resource is not in a state that allows this' },
  ROUTER_LIMIT_EXCEEDED: { status: 503, meaning: 'MEDIASOUP_MAX_ROUTERS routers already open' },
  // The relay is on its way out (SIGTERM or POST /internal/v1/drain): create the room on another relay.
  DRAINING: { status: 503, meaning: 'the relay is draining (SIGTERM or POST /internal/v1/drain): create the room on another relay' },
  // The caller's own room is full, not the service: 429 (as a quota), the other rooms go on; freeing
  // resources in that room, not waiting, is what lets the next creation through.
  ROUTER_CAPACITY_EXCEEDED: { status: 429, meaning: "the router holds its cap of this kind; details {routerId, resource, max}" },
  STREAM_LIMIT_EXCEEDED: { status: 503, meaning: 'EVENTS_MAX_STREAMS streams are open already; Retry-After is set' },
  // The relay's recordings (RECORDINGS_MAX) are all in use: the service's own limit, as a quota.
  RECORDING_CAPACITY_EXCEEDED: { status: 429, meaning: 'RECORDINGS_MAX recordings are under way on this relay; details {max}' },
  RECORDING_STORAGE_FULL: { status: 507, meaning: 'RECORDINGS_DIR has less than RECORDINGS_MIN_FREE_MB free; details {freeMb, minFreeMb}' },
  CAN_NOT_CONSUME: { status: 400, meaning: 'the capabilities cannot consume this producer' },
  // A node of the cluster holds the resource and did not answer (killed, cut off): retry, or wait for node.lost.
  NODE_UNREACHABLE: { status: 503, meaning: 'the cluster node holding the resource did not answer (or, for an id no other node holds, some did not); details {nodeIds}' },
  // The resource was on a node the cluster declared lost (node.lost): it is gone.
  NODE_LOST: { status: 404, meaning: 'the resource was on a cluster node that was lost (node.lost); details {nodeId, id}' },
  MEDIASOUP_ERROR: { status: 500, meaning: 'the media engine failed' },
  INTERNAL_ERROR: { status: 500, meaning: 'any other failure' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type RelayErrorCode = keyof typeof RELAY_ERRORS;
export type RelayErrorStatus = (typeof RELAY_ERRORS)[RelayErrorCode]['status'];

/** Every code the relay answers with, in the table's order. */
export const RELAY_ERROR_CODES = Object.keys(RELAY_ERRORS) as [RelayErrorCode, ...RelayErrorCode[]];

/** The body of every error answer under /internal. */
export const relayErrorSchema = z.object({
  code: z.enum(RELAY_ERROR_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

export type RelayErrorBody = z.infer<typeof relayErrorSchema>;

/** An error an operation can answer with: its code (the status comes from the table) and what it means there. */
export interface ErrorRow {
  readonly code: RelayErrorCode;
  readonly meaning: string;
}

export const errorRow = (code: RelayErrorCode, meaning: string = RELAY_ERRORS[code].meaning): ErrorRow => ({ code, meaning });

/** Errors every operation can answer with (added to each operation's own). */
export const COMMON_ERRORS: readonly ErrorRow[] = [errorRow('UNAUTHORIZED'), errorRow('MEDIASOUP_ERROR'), errorRow('INTERNAL_ERROR')];

export const VALIDATION = errorRow('VALIDATION_ERROR');
export const notFoundRow = (what: string): ErrorRow => errorRow('NOT_FOUND', `${what} not found; details {resource, id}`);
/** The per-router cap of `plural` (MEDIASOUP_MAX_<PLURAL>_PER_ROUTER) reached. */
export const capacityRow = (plural: string): ErrorRow =>
  errorRow('ROUTER_CAPACITY_EXCEEDED', `the router holds (or is creating) MEDIASOUP_MAX_${plural.toUpperCase()}_PER_ROUTER ${plural}; details {routerId, resource, max}`);
