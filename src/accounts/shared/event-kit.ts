// How an account event is written: its id, type and time, then its own fields (src/accounts/events.ts
// is the catalog; features add their events to it).
import { z } from 'zod';

export const eventTime = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
  .describe('yyyy-MM-dd HH:mm:ss, Asia/Shanghai');
const eventId = z
  .string()
  .regex(/^(0|[1-9][0-9]*)$/)
  .describe("a decimal integer, strictly increasing in the order a stream sends events, the same on every instance sharing the database (docs/events.md \"Ids and resume\")");

export function event<T extends string, S extends z.ZodRawShape>(type: T, shape: S, description: string) {
  return z.object({ id: eventId, type: z.literal(type), time: eventTime, ...shape }).describe(description);
}

export const userId = z.int().describe('the user id');
