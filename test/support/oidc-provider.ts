// A real OpenID Provider (panva's certified oidc-provider) on loopback for the web flow's tests: one
// confidential client whose redirect URI is the service's callback, its own RSA key, and an
// interaction endpoint that logs in the account the test names and grants consent (a real Grant),
// so the authorization code flow runs end to end without a browser. `browse` follows the redirects
// with the provider's cookies as a browser would. With `pages`, the interaction is what a browser
// meets instead: a login form (the account's e-mail address) and a consent page with an Allow button.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export interface TestAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who the next interaction logs in. */
  account: TestAccount;
  /** Follows the provider's redirects from `url` (with its cookies) until one leaves the provider: that Location. */
  browse(url: string): Promise<string>;
  /** As browse(), for a flow asked with response_mode=form_post: the form the provider's last page would post. */
  browseToForm(url: string): Promise<{ action: string; fields: URLSearchParams }>;
  close(): Promise<void>;
}

/** The HTML of an interaction page: one form posting to `action`. */
function page(title: string, action: string, fields: string, button: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><form method="post" action="${action}">${fields}<button type="submit" id="provider-submit">${button}</button></form></body></html>`;
}

const unescapeHtml = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (_, entity: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (entity[0] !== '#') return named[entity.toLowerCase()]!;
    return String.fromCodePoint(entity[1] === 'x' || entity[1] === 'X' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10));
  });

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A form body of at most 4 KiB. */
async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > 4096) throw new Error('form body too large');
  }
  return new URLSearchParams(text);
}

export async function startTestProvider(options: { clientId: string; callbackUrl: string; pages?: boolean }): Promise<TestProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-rs256', alg: 'RS256', use: 'sig' };
  const clientSecret = `secret-${options.clientId}-0123456789abcdef0123456789`;
  const accounts = new Map<string, TestAccount>();
  const state: { account: TestAccount } = { account: { sub: 'nobody' } };
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: options.clientId, client_secret: clientSecret, redirect_uris: [options.callbackUrl], token_endpoint_auth_method: 'client_secret_post' }],
    jwks: { keys: [jwk] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The scopes' claims in the ID token itself (as Google's), not only at the userinfo endpoint.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub);
      return account ? { accountId: sub, claims: () => ({ ...account }) } : undefined;
    },
  });
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return callback(req, res);
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (options.pages && req.method === 'GET') {
        // What a browser is shown: the login form, then the consent page.
        const login = details.prompt.name === 'login';
        const html = login
          ? page('Sign in to the test provider', `/interaction/${details.uid}`, '<input name="login" id="provider-login" placeholder="e-mail" autocomplete="off">', 'Sign in')
          : page(`Allow ${escapeHtml(String(details.params.client_id))} to see your e-mail and profile?`, `/interaction/${details.uid}`, '', 'Allow');
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
        return;
      }
      if (options.pages && details.prompt.name === 'login' && (await formBody(req)).get('login') !== state.account.email) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page('Unknown account', `/interaction/${details.uid}`, '<input name="login" id="provider-login">', 'Sign in'));
        return;
      }
      if (details.prompt.name === 'login') {
        accounts.set(state.account.sub, state.account);
        return provider.interactionFinished(req, res, { login: { accountId: state.account.sub } }, { mergeWithLastSubmission: false });
      }
      const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
      grant.addOIDCScope(String(details.params.scope));
      return provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });
  const cookies = new Map<string, string>();
  /** Follows the provider's redirects from `start` until one leaves it (that URL), or it answers a form_post page (that form). */
  const walk = async (start: string): Promise<string | { action: string; fields: URLSearchParams }> => {
    cookies.clear();
    let url = start;
    for (let hop = 0; hop < 10; hop++) {
      if (!url.startsWith(issuer)) return url;
      const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = pair!.indexOf('=');
        cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
      }
      const location = res.headers.get('location');
      if (location) {
        url = new URL(location, url).href;
        continue;
      }
      const html = await res.text();
      const form = /<form method="post" action="([^"]+)">/.exec(html);
      if (!form) throw new Error(`the provider answered ${res.status} without a redirect: ${html.slice(0, 300)}`);
      const fields = new URLSearchParams();
      for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)) fields.set(name!, unescapeHtml(value!));
      return { action: unescapeHtml(form[1]!), fields };
    }
    throw new Error('too many redirects at the provider');
  };
  return {
    issuer,
    clientId: options.clientId,
    clientSecret,
    get account() {
      return state.account;
    },
    set account(value) {
      state.account = value;
    },
    async browse(start) {
      const end = await walk(start);
      if (typeof end !== 'string') throw new Error(`the provider answered with a form to post to ${end.action}, not a redirect`);
      return end;
    },
    async browseToForm(start) {
      const end = await walk(start);
      if (typeof end === 'string') throw new Error(`the provider redirected to ${end}, it posted no form`);
      return end;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A browser keeps its connections alive: closed here, or close() would wait for them.
        server.closeAllConnections();
      }),
  };
}
