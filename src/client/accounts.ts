// The operators' side of the account area on the internal surface, for a service holding the internal
// token: introspection (RFC 7662) and moderation. Typed by the wire types generated from the
// account area's contract (wire.gen.ts, `npm run client:types`).
import { toError } from './errors.js';
import type { BanBody, Introspection, MfaCleared, OperatorUser, OperatorUserDetail, RelayClientOptions, UsersPage } from './types.js';

/**
 * @example
 * const { introspect, ban } = accountsClient({ baseUrl, token })
 * if (!(await introspect(token)).active) dropUser()
 * await ban(42, { until: '2026-12-01 00:00:00', reason: 'spam' })
 */
export function accountsClient(options: RelayClientOptions) {
  const base = `${options.baseUrl.replace(/\/+$/, '')}/internal/v1`;
  const fetcher = options.fetch ?? fetch;
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetcher(`${base}${path}`, {
      method,
      headers: { 'X-Internal-Token': options.token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw await toError(res);
    return (await res.json()) as T;
  }
  return {
    /** Whether an access token is active now, and whose (RFC 7662); `{active: false}` for any other token. */
    introspect: (token: string) => call<Introspection>('POST', '/auth/introspect', { token }),
    /** Bans a user (every session ends at once); RelayClientError NOT_FOUND for an unknown id. */
    ban: (userId: number, body: BanBody = {}) => call<OperatorUser>('POST', `/users/${userId}/ban`, body),
    unban: (userId: number) => call<OperatorUser>('DELETE', `/users/${userId}/ban`),
    /** Removes every second factor of a user (TOTP, recovery codes, passkeys); the owner is mailed. */
    clearMfa: (userId: number) => call<MfaCleared>('DELETE', `/users/${userId}/mfa`),
    /** One user for operators: fields, the ban in force, live sessions. */
    user: (userId: number) => call<OperatorUserDetail>('GET', `/users/${userId}`),
    /** A page of users; `query`: username or e-mail prefix; follow `next_cursor`. */
    users: (query: { query?: string; cursor?: string; limit?: number } = {}) => {
      const params = new URLSearchParams();
      if (query.query !== undefined) params.set('query', query.query);
      if (query.cursor !== undefined) params.set('cursor', query.cursor);
      if (query.limit !== undefined) params.set('limit', String(query.limit));
      const search = params.toString();
      return call<UsersPage>('GET', `/users${search ? `?${search}` : ''}`);
    },
  };
}
