// TURN credentials for a signed-in user: the user key of the username is the account's id.
import type { Config } from '../../config/index.js';
import { iceServersFor } from '../../turn/index.js';
import type { IceServersView } from './contract.js';
import type { Authenticated } from '../types.js';

export function iceServersOf(turn: Config['turn'], auth: Authenticated, now: Date): IceServersView {
  if (!turn) return { ice_servers: [], expires_in: 0 };
  const { iceServers, expiresIn } = iceServersFor(turn, String(auth.user.id), now);
  return { ice_servers: iceServers, expires_in: expiresIn };
}
