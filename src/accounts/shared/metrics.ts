// The account area's own metric: login and refresh outcomes (auth_outcomes_total), counted by a
// middleware on those two routes and registered on the process's registry by the module's collect.
import type { MiddlewareHandler } from 'hono';
import { Counter } from 'prom-client';

export type AuthAction = 'login' | 'refresh';
export type AuthOutcome = 'ok' | 'failed' | 'rate_limited' | 'reused';

export class AuthOutcomes {
  readonly counter = new Counter({
    name: 'auth_outcomes_total',
    help: 'Account API outcomes: login and refresh ok/failed/rate_limited; refresh reused (a revoking reuse, also counted as failed)',
    labelNames: ['action', 'outcome'] as const,
    // Registered by the module's collect, on the registry of the process that composes it.
    registers: [],
  });

  record(action: AuthAction, outcome: AuthOutcome): void {
    this.counter.inc({ action, outcome });
  }

  /**
   * Counts the answer of each request of the route by its status (200 ok, 429 rate limited, any
   * other failed): first of the route's middleware, so a rate-limited request is counted too.
   * @example createRoute({ ...login, middleware: [outcomes.counting('login'), authLimit] })
   */
  counting(action: AuthAction): MiddlewareHandler {
    const { counter } = this;
    return async function countAuthOutcome(c, next) {
      await next();
      counter.inc({ action, outcome: outcomeOf(c.res.status) });
    };
  }
}

function outcomeOf(status: number): AuthOutcome {
  if (status === 200) return 'ok';
  if (status === 429) return 'rate_limited';
  return 'failed';
}
