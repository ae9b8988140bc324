// Small shapes every family of the relay's contract uses.
import { z } from 'zod';
import { BOUNDS } from './bounds.js';

/** An integer within a bound of BOUNDS (or a family's own bounds). */
export const int = (range: { min: number; max: number }) => z.number().int().min(range.min).max(range.max);

/** An id a body names: the relay's own ids are UUIDs (36 characters); bounded all the same. */
export const id = z.string().min(1).max(BOUNDS.id);

export const mediaKind = z.enum(['audio', 'video']);

export const anyObject = z.record(z.string(), z.unknown());

export const timeString = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/).describe('yyyy-MM-dd HH:mm:ss, Asia/Shanghai');

/** appData as the relay answers it (whatever was accepted at creation); bounds.ts appDataSchema checks it on the way in. */
export const appDataView = z.record(z.string(), z.unknown());

/** An answer naming a resource and its new state. */
export const connectedSchema = z.object({ id: z.string(), connected: z.literal(true) });
