// The Hono environment every module's routes share: a leaf, imported by areas, never importing one.
import type { RequestIdVariables } from 'hono/request-id';

export type AppEnv = { Variables: RequestIdVariables };
