// POST /internal/v1/ice-servers (contract/ice-servers.ts), and the TURN servers a new transport's answer carries.
import type { z } from 'zod';
import type { Config } from '../../config/index.js';
import { iceServersFor, isTurnUserKey } from '../../turn/index.js';
import { createIceServers, type iceServersSchema } from '../contract/ice-servers.js';
import { relayRouter, withJsonBody } from './router.js';

export type TurnSettings = Config['turn'];

export function iceServersRoutes(turn: TurnSettings) {
  return relayRouter().openapi(withJsonBody(createIceServers), (c) => {
    const { userId } = c.req.valid('json');
    return c.json(relayIceServers(turn, userId === undefined ? '' : String(userId)), 200);
  });
}

/** No TURN: nothing to hand out. An empty or unusable key gets a random one (src/turn). */
export function relayIceServers(turn: TurnSettings, userKey: string): z.output<typeof iceServersSchema> {
  if (!turn) return { iceServers: [], expiresIn: 0 };
  return iceServersFor(turn, userKey, new Date());
}

/** The user key of a transport's credential: its appData.userId when that fits a username, else its id. */
export function transportUserKey(transportId: string, appData: Record<string, unknown> | undefined): string {
  const userId = appData?.userId;
  const key = typeof userId === 'string' || (typeof userId === 'number' && Number.isSafeInteger(userId)) ? String(userId) : undefined;
  return key !== undefined && isTurnUserKey(key) ? key : transportId;
}
