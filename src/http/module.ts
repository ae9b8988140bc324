// What an area gives the app (src/app.ts) and the composition (src/compose.ts): a leaf, so the app,
// the docs and the observability endpoints know modules only through this shape, never their insides.
import type { Context, Hono } from 'hono';
import type { Registry } from 'prom-client';
import type { AppEnv } from './env.js';

/** Which listener a mount is served on: the public one (account API, docs) or the internal one (relay, operations). */
export type Surface = 'public' | 'internal';

export interface Mount {
  /** Where `routes` is mounted, e.g. `/api/v1/auth` or `/internal/v1`. */
  prefix: string;
  /** `every`: answered on every listener (/healthz, /readyz). */
  surface: Surface | 'every';
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema of routes may be mounted
  routes: Hono<any, any, any>;
  /**
   * An internal mount answered without X-Internal-Token: only for what holds no data (the relay's
   * docs page shell and its static assets). Its routes answer before the token guard; any other path
   * under its prefix still needs the token.
   */
  withoutToken?: true;
}

/** The error shape of one path scope (e.g. `/api`): how its errors and its unknown routes are answered. */
export interface ErrorScope {
  /** Paths equal to it or under it (`/api` covers `/api/v1/...`). */
  scope: string;
  onError(error: unknown, c: Context<AppEnv>): Response | Promise<Response>;
  /** An unknown route under the scope; `allowed` lists the methods the path does have (for a 405). */
  notFound?(c: Context<AppEnv>, allowed: string[]): Response | Promise<Response>;
}

/**
 * What a module adds to the OpenAPI document of a surface besides the operations its OpenAPIHono
 * mounts generate themselves (src/docs/document.ts merges the parts of every composed module).
 */
export interface DocumentPart {
  info?: { title: string; description: string };
  tags?: Array<{ name: string; description?: string }>;
  securitySchemes?: Record<string, unknown>;
  /** Applied to the whole document (e.g. the internal token on every internal path). */
  security?: Array<Record<string, string[]>>;
  /** Operations not generated from routes (an SSE stream, a page), keyed by their full path. */
  paths?: Record<string, Record<string, unknown>>;
  webhooks?: Record<string, unknown>;
  schemas?: Record<string, unknown>;
  /**
   * Responses any operation of the surface may give (the /api envelope's 429 and 500), by status:
   * added to each operation that does not state that status itself.
   */
  responses?: Record<string, unknown>;
}

/**
 * One area of the service (accounts, relay): its routes, the shape of its errors, its readiness,
 * its metrics and its stop. Built by a factory (`createAccounts(deps)`, `createRelay(deps)`) from
 * the composition; the app mounts `mounts` and builds its single onError from `errors`.
 */
export interface Module {
  name: string;
  mounts: Mount[];
  errors?: ErrorScope[];
  /** Checks for /readyz, each `ok` or the reason it is not. */
  ready?(): Promise<Record<string, string>> | Record<string, string>;
  /** What the module adds to each surface's OpenAPI document beyond its generated operations. */
  documents?: Partial<Record<Surface, DocumentPart>>;
  /** Registers the module's own collectors on the process's registry. */
  collect?(registry: Registry): void;
  /** Shutdown, first step (before the listeners close): ends what would hold them open (event streams). */
  release?(): void;
  /** Shutdown, last step: closes what the module owns, within `deadlineMs`. */
  stop?(options: { deadlineMs: number }): Promise<void>;
}
