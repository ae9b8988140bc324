// What an action that adds a way into the account (a passkey, TOTP) or moves it (a new e-mail
// address) asks of the session: a factor proved within REAUTH_WINDOW_S (its sign-in, or POST /reauth),
// so a stolen access token alone cannot do it; and for a new factor, what the features ask of it first
// (the e-mail feature: an address the owner proved).
import { AuthError } from './auth-error.js';
import type { Authenticated } from '../types.js';

/** A feature's condition on a new sign-in factor: throws its AuthError when the session may not add one. */
export type NewFactorCheck = (auth: Authenticated) => void;

export class FreshSession {
  /** Checked in order before the freshness of a session adding a factor (the features add theirs as they are built). */
  readonly newFactorChecks: NewFactorCheck[] = [];

  constructor(private readonly deps: { now: () => Date; windowS: number }) {}

  /** Until when a session that proved a factor at `authenticatedAt` counts as fresh. */
  freshUntil(authenticatedAt: Date): Date {
    return new Date(authenticatedAt.getTime() + this.deps.windowS * 1000);
  }

  /** AuthError `reauthentication_required` (2017, 403) unless the session proved a factor within the window. */
  require(auth: Authenticated): void {
    if (this.freshUntil(auth.authenticatedAt).getTime() < this.deps.now().getTime()) throw new AuthError('reauthentication_required');
  }

  /** For a new sign-in factor: the features' checks first (an unproved address: 2018, 403), then as require(). */
  requireForNewFactor(auth: Authenticated): void {
    for (const check of this.newFactorChecks) check(auth);
    this.require(auth);
  }
}
