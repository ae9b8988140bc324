// An Apple-style OpenID Provider for tests: a discovery document and a JWKS served on loopback, and
// ID tokens signed with jose by its key (or by a key it does not publish, for the refusals).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export interface TestIssuer {
  issuer: string;
  /** An ID token signed by the published key (or `key: 'stranger'`, one it does not publish); `header` overrides the protected header. */
  sign(claims: JWTPayload, options?: { key?: 'own' | 'stranger'; header?: Record<string, unknown> }): Promise<string>;
  /** The published public key as a JWK (for the HS256-keyed-with-the-public-key refusal). */
  publicJwk: JWK;
  close(): Promise<void>;
}

export async function startTestIssuer(): Promise<TestIssuer> {
  const own = await generateKeyPair('ES256', { extractable: true });
  const stranger = await generateKeyPair('ES256');
  const publicJwk = { ...(await exportJWK(own.publicKey)), kid: 'own', alg: 'ES256', use: 'sig' };
  let issuer = '';
  const server: Server = createServer((req, res) => {
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/.well-known/openid-configuration') {
      return json({
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/keys`,
        response_types_supported: ['code'],
        subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['ES256', 'RS256', 'HS256', 'none'],
      });
    }
    if (req.url === '/keys') return json({ keys: [publicJwk] });
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    publicJwk,
    sign: (claims, options = {}) => {
      const key: CryptoKey = options.key === 'stranger' ? stranger.privateKey : own.privateKey;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iat: now, exp: now + 600, iss: issuer, ...claims }).setProtectedHeader({ alg: 'ES256', kid: options.key === 'stranger' ? 'stranger' : 'own', ...options.header }).sign(key);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
