// The cookie that binds a web flow to the browser that started it: what only that browser keeps of
// the flow (the provider, the state, the PKCE verifier, the nonce), HMAC-signed under its own subkey.
import type { AuthKeys } from '../../secrets/auth-key.js';

/** What the browser that started a web flow keeps: the provider, the state, the PKCE verifier and the nonce. */
export interface FlowCookie {
  p: string;
  s: string;
  v: string;
  n: string;
}

export function sealFlowCookie(keys: AuthKeys, value: FlowCookie): string {
  const body = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${body}.${keys.digest('oidc-flow-cookie', body)}`;
}

/** The cookie's value; undefined when it is missing, too long, not signed by us or not one. */
export function openFlowCookie(keys: AuthKeys, cookie: string | undefined): FlowCookie | undefined {
  if (!cookie || cookie.length > 2048) return undefined;
  const [body, mac] = cookie.split('.');
  if (!body || !mac || !keys.matches('oidc-flow-cookie', body, mac)) return undefined;
  try {
    const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as FlowCookie;
    return typeof value.p === 'string' && typeof value.s === 'string' && typeof value.v === 'string' && typeof value.n === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
