// What a failed mediasoup call means for the caller: engine error -> RelayError. No HTTP here.
import { conflict, RelayError, validationError } from '../errors.js';

/** mediasoup 3.11's RtpListener: "ssrc|RTX ssrc|MID|RID already exists in RTP listener …". */
const RTP_LISTENER_CLASH = /already exists in RTP listener/;
/**
 * mediasoup 3.11's worker: every router, transport, producer, consumer, data producer/consumer, RTP
 * observer and WebRtcServer of a worker registers its id in one table ("Channel request handler with
 * ID … already exists"). Only a caller-chosen id (a pipe producer's) can meet this; the ops check the
 * registry first, this covers the ids it does not hold (observers, a room's other parts, internal pipes).
 */
const HANDLER_ID_CLASH = /request handler with ID .* already exists/;
/** mediasoup 3.11's SctpListener: "streamId already exists in SCTP listener …" (two data producers on one stream). */
const SCTP_LISTENER_CLASH = /already exists in SCTP listener/;

/**
 * Maps a failure of a mediasoup call: the engine throws TypeError/UnsupportedError when the
 * request's content is invalid (the caller's fault, 400); anything else is the engine failing (500).
 * The engine's own message is logged by the caller, never sent for a 500.
 */
export function fromEngineError(error: unknown, operation: string): RelayError {
  if (error instanceof RelayError) return error;
  if (error instanceof TypeError || isUnsupportedError(error)) {
    return validationError([{ path: '', message: error.message }], `media engine rejected the request: ${operation}`);
  }
  // The worker refuses a producer whose ssrc, RTX ssrc, MID (or RID without a MID) another producer
  // of the transport already uses, as a plain Error: the request clashes with the transport's state.
  if (error instanceof Error && RTP_LISTENER_CLASH.test(error.message)) {
    return conflict(`media engine refused the request: ${operation}: an ssrc, MID or RID is already in use on this transport`, {
      reason: error.message.replace(/\s*\[method:[^\]]*\]\s*$/, ''),
    });
  }
  if (error instanceof Error && HANDLER_ID_CLASH.test(error.message)) {
    return conflict(`media engine refused the request: ${operation}: the id is already in use on this worker`, { reason: 'id already in use' });
  }
  if (error instanceof Error && SCTP_LISTENER_CLASH.test(error.message)) {
    return conflict(`media engine refused the request: ${operation}: the SCTP stream is already in use on this transport`, {
      reason: error.message.replace(/\s*\[method:[^\]]*\]\s*$/, ''),
    });
  }
  return new RelayError('MEDIASOUP_ERROR', `media engine failed: ${operation}`);
}

/**
 * mediasoup's UnsupportedError, known by its name: mediasoup 3.11 exports the class as
 * `mediasoup.types.UnsupportedError`, but upstream's `types` is a type-only export (no class at
 * run time), and the relay's code must type-check against both.
 */
function isUnsupportedError(error: unknown): error is Error {
  return error instanceof Error && error.name === 'UnsupportedError';
}
