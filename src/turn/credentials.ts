// Short-lived TURN credentials in the "TURN REST API" scheme that coturn checks with use-auth-secret
// (draft-uberti-behave-turn-rest-00): username `<expiry unix seconds>:<user key>`, credential
// base64(HMAC-SHA1(secret, username)). coturn recomputes the HMAC with its static-auth-secret and
// refuses an expired username, so the service keeps nothing: no store, no revocation list.
import { createHmac, randomBytes } from 'node:crypto';

/** What the TURN slice of the configuration gives (src/config/turn.ts). */
export interface TurnSettings {
  urls: readonly string[];
  secret: string;
  credentialTtlS: number;
}

/** One entry of RTCPeerConnection's `iceServers` (and mediasoup-client's transport option of that name). */
export interface IceServer {
  urls: string[];
  username: string;
  credential: string;
}

export interface IceServers {
  iceServers: IceServer[];
  /** Seconds the credential stays valid from now. */
  expiresIn: number;
}

/** A user key coturn accepts in the username as it is: no separator, printable, short. */
const USER_KEY = /^[A-Za-z0-9_.@+-]{1,128}$/;

/** True when `key` can be written into a TURN username unchanged. */
export function isTurnUserKey(key: string): boolean {
  return USER_KEY.test(key);
}

/** The credential coturn expects for `username`: base64(HMAC-SHA1(secret, username)). */
export function turnCredential(secret: string, username: string): string {
  return createHmac('sha1', secret).update(username).digest('base64');
}

/**
 * The ICE servers for one user: every configured URL under one username and credential.
 * A key that does not fit a username (a colon, spaces, too long) is replaced by a random one, so that
 * whatever a caller puts in appData never reaches coturn's parser.
 * @example iceServersFor(config.turn, String(user.id), new Date())
 */
export function iceServersFor(turn: TurnSettings, userKey: string, now: Date): IceServers {
  const key = isTurnUserKey(userKey) ? userKey : randomBytes(9).toString('base64url');
  const expiry = Math.floor(now.getTime() / 1000) + turn.credentialTtlS;
  const username = `${expiry}:${key}`;
  return { iceServers: [{ urls: [...turn.urls], username, credential: turnCredential(turn.secret, username) }], expiresIn: turn.credentialTtlS };
}
