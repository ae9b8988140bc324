// What an account feature gives the module (module.ts lists them): its routes under /api/v1/auth and
// its mounts elsewhere, built from the area's services and route kit.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Mount } from '../http/module.js';
import type { AuditLog, PruneDeadRows } from './audit/log.js';
import type { AccountsDeps } from './deps.js';
import type { AuthEnv, RouteKit } from './shared/route-kit.js';
import type { ReauthFactor } from './shared/second-factors.js';
import type { ErrorRow } from './shared/error-table.js';
import type { AccountServices } from './services.js';

export interface FeatureContext {
  deps: AccountsDeps;
  kit: RouteKit;
  services: AccountServices;
  audit: AuditLog;
  now: () => Date;
  /** The second factors re-authentication accepts besides the password, in the feature list's order. */
  reauthFactors: readonly ReauthFactor[];
  /** What the features answer a login instead of a session after the right password (documented on POST /login). */
  loginRefusals: readonly ErrorRow[];
}

export interface AccountFeature {
  /** The feature's routes, mounted under /api/v1/auth (in the envelope's error shape). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema of routes may be mounted
  api?(context: FeatureContext): OpenAPIHono<AuthEnv, any, any>;
  /** Its mounts outside /api (the JWKS, the internal surface). */
  mounts?(context: FeatureContext): Mount[];
  /** What it answers a login instead of a session after the right password (a second step). */
  loginRefusals?: readonly ErrorRow[];
  /** A second factor: what re-authentication accepts of it. */
  reauthFactor?(services: AccountServices): ReauthFactor;
  /** Deletes its short-lived rows (codes, challenges) once long dead. */
  prune?: PruneDeadRows;
}
