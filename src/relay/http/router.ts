// What every resource family's routes are built on: an OpenAPIHono whose validation failures come
// out in the relay's shape, and the route of the contract as served (a body first through jsonRequest).
import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.js';
import type { AnyRelayRoute } from '../contract/route.js';
import { jsonRequest, relayHook } from './validator.js';

/** @example relayRouter().openapi(withJsonBody(createTransport), async (c) => c.json(view, 201)) */
export function relayRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: relayHook });
}

/** A route of the contract with a JSON body: jsonRequest runs before the body's validation. */
export function withJsonBody<R extends AnyRelayRoute>(route: R): R & { middleware: typeof jsonRequest } {
  return { ...route, middleware: jsonRequest };
}
