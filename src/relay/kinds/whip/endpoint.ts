// A WHIP or WHEP endpoint: what the signaling server mints (POST /internal/v1/whip-endpoints) and a
// client then posts its offer to. It is a resource of the room (a row of the kinds table), so it closes
// with its router as a transport does; it holds its bearer token only as a keyed digest, and its
// sessions (each a WebRTC transport with the producers or consumers it made).
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { RelayEventInput } from '../../contract/events.js';
import type { SessionRouters } from './session-router.js';

export type EndpointKind = 'whip' | 'whep';

/** The digest key of this process: endpoints live in its memory only, so their digests need no key beyond it. */
const DIGEST_KEY = randomBytes(32);

export function tokenDigest(token: string): Buffer {
  return createHmac('sha256', DIGEST_KEY).update(token).digest();
}

/** A new bearer token: 256 random bits, base64url. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Why a session ended: DELETE on it, its endpoint revoked or closed, or its transport closed otherwise. */
export type SessionEndReason = 'api' | 'endpoint_closed' | 'transport_closed';

export interface Session {
  readonly id: string;
  readonly transportId: string;
  etag: string;
  /** The client's current ICE ufrag: a PATCH naming another one restarts ICE. */
  remoteIceUfrag: string;
  /** WHIP: the producers it made. WHEP: the producers it consumes. */
  readonly producerIds: string[];
  readonly consumerIds: string[];
  /** Set by whoever closes the transport on purpose, read when its close ends the session. */
  endReason?: SessionEndReason;
  /** Closes the session's transport (its producers and consumers close with it). */
  close(reason: SessionEndReason): void;
}

export class Endpoint {
  readonly id = randomUUID();
  closed = false;
  readonly observer = new EventEmitter();
  readonly sessions = new Map<string, Session>();
  /** WHEP: the routers its sessions' transports are on, one per mapping of payload types (session-router.ts). */
  readonly sessionRouters: SessionRouters = new Map();
  /** Sessions being set up (counted against the cap with the open ones). */
  pending = 0;
  /** Given by the kinds table's `watch` when the registry takes it: where its sessions' events go. */
  publish: (input: RelayEventInput) => void = () => {};
  readonly createdAt = new Date();
  /** The absolute URL clients post their offers to (set once at creation). */
  url = '';

  constructor(
    readonly kind: EndpointKind,
    readonly routerId: string,
    readonly appData: Record<string, unknown>,
    private readonly digest: Buffer,
    readonly expiresAt: Date,
    /** WHEP: the producers it plays; undefined: every producer of the room. */
    readonly producerIds: readonly string[] | undefined,
  ) {}

  /** Whether `token` is this endpoint's (compared as digests, in constant time). */
  accepts(token: string): boolean {
    return timingSafeEqual(tokenDigest(token), this.digest);
  }

  expired(now = new Date()): boolean {
    return now.getTime() >= this.expiresAt.getTime();
  }

  /** Ends its sessions and tells the registry (through its observer) that it is gone. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const session of [...this.sessions.values()]) session.close('endpoint_closed');
    this.observer.emit('close');
  }
}
