// The 6-digit codes mailed to prove an address (the password reset, the e-mail verification and
// change), one way for all: drawn uniformly, stored only as a keyed digest (HMAC-SHA256 under the
// feature's subkey of AUTH_KEY_SECRET, so a database dump alone cannot test the 10^6 candidates) of
// the code and what it is good for, alive ONE_TIME_CODE_TTL_MS, compared in constant time. Each
// feature keeps its own rows and counts its tries (at most ONE_TIME_CODE_MAX_FAILURES wrong ones,
// counted before any comparison).
import { randomInt } from 'node:crypto';
import type { AuthKeyPurpose, AuthKeys } from '../../secrets/auth-key.js';

export const ONE_TIME_CODE_TTL_MS = 15 * 60 * 1000;
/** Wrong tries a code takes (counted before the comparison, so concurrent guesses cannot pass it). */
export const ONE_TIME_CODE_MAX_FAILURES = 5;

export interface IssuedCode {
  /** What the user is mailed. */
  code: string;
  /** What is stored. */
  digest: string;
  expiresAt: Date;
}

/** @example const codes = new OneTimeCodes(keys, 'reset-code-digest'); const { code, digest } = codes.issue(`${userId}`, now) */
export class OneTimeCodes {
  constructor(
    private readonly keys: AuthKeys,
    private readonly purpose: AuthKeyPurpose,
  ) {}

  /** A new code for `scope` (what it is good for: its user, and for some its purpose and address). */
  issue(scope: string, now: Date): IssuedCode {
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    return { code, digest: this.digest(scope, code), expiresAt: new Date(now.getTime() + ONE_TIME_CODE_TTL_MS) };
  }

  digest(scope: string, code: string): string {
    return this.keys.digest(this.purpose, `${scope}:${code}`);
  }

  /** Whether `code` is the one `stored` digests for `scope`, compared in constant time. */
  matches(scope: string, code: string, stored: string): boolean {
    return this.keys.matches(this.purpose, `${scope}:${code}`, stored);
  }
}
