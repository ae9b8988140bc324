// How an account event is written: its id, type and time, then its own fields (src/accounts/events.ts
// is the catalog; features add their events to it).
import { z } from 'zod';

export const eventTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
  .describe('yyyy-MM-dd HH:mm:ss, Asia/Shanghai');
const eventId = z.string().describe('opaque; strictly increasing within one process, never repeated by another process lifetime');

export function event<T extends string, S extends z.ZodRawShape>(type: T, shape: S, description: string) {
  return z.object({ id: eventId, type: z.literal(type), time: eventTime, ...shape }).describe(description);
}

export const userId = z.int().describe('the user id');
