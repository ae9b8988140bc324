// The bus's type filter (?types= of the stream) and events that concern no router (the account area's):
// exact types, prefixes such as auth.*, both filters together.
import { describe, expect, it } from 'vitest';
import { createEventBus, typeMatches } from '../../src/events/bus.js';
import type { AnyEvent } from '../../src/events/types.js';

describe('type filter', () => {
  it('matches exact types, prefixes ending in .* and *', () => {
    expect(typeMatches(['router.closed'], 'router.closed')).toBe(true);
    expect(typeMatches(['router.closed'], 'router.closedx')).toBe(false);
    expect(typeMatches(['auth.*'], 'auth.session.ended')).toBe(true);
    expect(typeMatches(['auth.*'], 'authx.session')).toBe(false);
    expect(typeMatches(['auth.session.*'], 'auth.user.banned')).toBe(false);
    expect(typeMatches(['*'], 'anything')).toBe(true);
  });

  it('delivers only matching types; events with no router skip a routerId filter, relay-wide ones do not', () => {
    const bus = createEventBus<AnyEvent>({ routersOf: (e) => (String(e.type).startsWith('auth.') ? [] : (e.routerId as string | undefined)) });
    const auth = bus.subscribe({ types: ['auth.*'] });
    const byRouter = bus.subscribe({ routerIds: ['r1'] });
    const both = bus.subscribe({ routerIds: ['r1'], types: ['router.*'] });
    bus.publish({ type: 'auth.session.ended', userId: 1, sessionId: 's', reason: 'logout' });
    bus.publish({ type: 'router.closed', routerId: 'r1' });
    bus.publish({ type: 'relay.draining' });
    bus.publish({ type: 'router.closed', routerId: 'r2' });
    const drain = (sub: ReturnType<typeof bus.subscribe>) => {
      const types: string[] = [];
      for (let e = sub.poll(); e; e = sub.poll()) types.push(e.type);
      return types;
    };
    expect(drain(auth)).toEqual(['auth.session.ended']);
    expect(drain(byRouter)).toEqual(['router.closed', 'relay.draining']);
    expect(drain(both)).toEqual(['router.closed']);
    bus.close();
  });
});
