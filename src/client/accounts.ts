// The operators' side of the account area on the internal surface, for a service holding the internal
// token: introspection (RFC 7662) and moderation. Typed by the account area's contract alone (types
// only, no server code), like the rest of the client by the relay's.
import type { z } from 'zod';
import type { banBody, operatorUser, operatorUserDetail, usersPage } from '../accounts/contract/moderation.js';
import type { IntrospectionView } from '../accounts/contract/tokens.js';
import { toError } from './errors.js';
import type { RelayClientOptions } from './types.js';

export type Introspection = IntrospectionView;
export type OperatorUser = z.output<typeof operatorUser>;
export type OperatorUserDetail = z.output<typeof operatorUserDetail>;
export type UsersPage = z.output<typeof usersPage>;
/** `until`: `yyyy-MM-dd HH:mm:ss` in Asia/Shanghai; absent: until lifted. */
export type BanBody = z.input<typeof banBody>;

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
