import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/index.js';

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected loadConfig to throw');
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.host).toBe('0.0.0.0');
    expect(config.database).toEqual({ kind: 'pglite', dataDir: path.join('.data', 'pglite') });
    expect(config.secretsDir).toBe(path.join('.data', 'secrets'));
    expect(config.auth).toEqual({
      accessTokenTtl: 7200,
      refreshTokenTtl: 2592000,
      refreshReuseGraceS: 10,
      failuresPerAccount: 10,
      failureWindowS: 900,
      hashMaxWaitMs: 2000,
      eventsRetentionDays: 90,
      issuer: 'http://localhost:3000',
      audience: 'chat-backend',
      keyRotationDays: 30,
      totpIssuer: 'chat-backend',
      reauthWindowS: 300,
    });
    expect(config.mail).toEqual({ smtpUrl: undefined, from: 'chat-backend <no-reply@localhost>' });
    expect(config.rateLimit).toEqual({ authPerMin: 10, refreshPerMin: 60, apiPerMin: 300, trustProxy: 'none', redisUrl: undefined });
    expect(config.http).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5000, connectionsCheckingIntervalMs: 1000 });
    // Issue 27 #4: outside production an unset DRAIN_TIMEOUT_S means no drain (30 s in production, below).
    expect(config.drainTimeoutS).toBe(0);
    expect(config.media.rtcMinPort).toBe(40000);
    expect(config.media.rtcMaxPort).toBe(40199);
    expect(config.media.maxRouters).toBe(500);
    expect(config.media.restartBaseMs).toBe(500);
    expect(config.media.restartMaxMs).toBe(30000);
  });

  it("issues tokens as the Fly.io app's public base URL when Fly.io names the app, and AUTH_ISSUER wins", () => {
    expect(loadConfig({ FLY_APP_NAME: 'chat-prod' }).auth.issuer).toBe('https://chat-prod.fly.dev');
    expect(loadConfig({ FLY_APP_NAME: 'chat-prod', AUTH_ISSUER: 'https://chat.example.com' }).auth.issuer).toBe('https://chat.example.com');
    expect(loadConfig({ PORT: '8080' }).auth.issuer).toBe('http://localhost:8080');
    expect(errorOf({ FLY_APP_NAME: 'Not An App/..' }).message).toContain('FLY_APP_NAME');
  });

  it('reads the mail and audit settings, refusing a URL that is not SMTP', () => {
    const config = loadConfig({ SMTP_URL: ' smtps://user:pw@smtp.example.com:465 ', MAIL_FROM: 'Chat <no-reply@chat.example>', AUTH_EVENTS_RETENTION_DAYS: '30' });
    expect(config.mail).toEqual({ smtpUrl: 'smtps://user:pw@smtp.example.com:465', from: 'Chat <no-reply@chat.example>' });
    expect(config.auth.eventsRetentionDays).toBe(30);
    expect(loadConfig({ SMTP_URL: '' }).mail.smtpUrl).toBeUndefined();
    for (const url of ['http://smtp.example.com', 'smtp.example.com:25', 'not a url']) expect(errorOf({ SMTP_URL: url }).message).toContain('SMTP_URL');
    for (const days of ['0', '-1', 'abc', '36501']) expect(errorOf({ AUTH_EVENTS_RETENTION_DAYS: days }).message).toContain('AUTH_EVENTS_RETENTION_DAYS');
    expect(errorOf({ MAIL_FROM: 'x'.repeat(300) }).message).toContain('MAIL_FROM');
  });

  it('bounds DRAIN_TIMEOUT_S to 0..3600 (0: no drain)', () => {
    expect(loadConfig({ DRAIN_TIMEOUT_S: '0' }).drainTimeoutS).toBe(0);
    expect(loadConfig({ DRAIN_TIMEOUT_S: '3600' }).drainTimeoutS).toBe(3600);
    expect(() => loadConfig({ DRAIN_TIMEOUT_S: '3601' })).toThrow(/DRAIN_TIMEOUT_S/);
    expect(() => loadConfig({ DRAIN_TIMEOUT_S: '-1' })).toThrow(/DRAIN_TIMEOUT_S/);
  });

  it('drains 30 s by default in production only; a DRAIN_TIMEOUT_S that is set applies everywhere', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://u@h/db', INTERNAL_TOKEN: 'x'.repeat(32), AUTH_KEY_SECRET: 'k'.repeat(32), MEDIASOUP_ANNOUNCED_IP: '203.0.113.7', AUTH_ISSUER: 'https://chat.example' };
    expect(loadConfig(production).drainTimeoutS).toBe(30);
    expect(loadConfig({ ...production, DRAIN_TIMEOUT_S: '0' }).drainTimeoutS).toBe(0);
    expect(loadConfig({ NODE_ENV: 'development' }).drainTimeoutS).toBe(0);
    expect(loadConfig({ NODE_ENV: 'test' }).drainTimeoutS).toBe(0);
    expect(loadConfig({ NODE_ENV: 'development', DRAIN_TIMEOUT_S: '5' }).drainTimeoutS).toBe(5);
  });

  it('refuses a DATABASE_URL that is not a PostgreSQL URL (issue 27 #5)', () => {
    for (const url of ['localhost:5432', 'mysql://u@h/db', 'postgres://', 'not a url', 'http://h/db']) expect(errorOf({ DATABASE_URL: url }).message, url).toContain('DATABASE_URL');
    expect(loadConfig({ DATABASE_URL: 'postgresql://u:p@db.example:6543/app' }).database).toEqual({ kind: 'postgres', url: 'postgresql://u:p@db.example:6543/app' });
    expect(loadConfig({ DATABASE_URL: 'postgres:///app?host=/var/run/postgresql' }).database.kind).toBe('postgres');
    expect(loadConfig({}).databaseConnectTimeoutS).toBe(30);
    expect(() => loadConfig({ DATABASE_CONNECT_TIMEOUT_S: '-1' })).toThrow(/DATABASE_CONNECT_TIMEOUT_S/);
  });

  it('selects the database from DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'memory://' }).database).toEqual({ kind: 'pglite', dataDir: undefined });
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).database).toEqual({ kind: 'postgres', url: 'postgres://u@h/db' });
  });

  it('names the bad variable', () => {
    expect(errorOf({ PORT: 'abc' }).message).toContain('PORT');
    expect(errorOf({ TRUST_PROXY: 'everyone' }).message).toContain('TRUST_PROXY');
    expect(errorOf({ REDIS_URL: 'http://x' }).message).toContain('REDIS_URL');
    expect(errorOf({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' }).message).toContain('HTTP_REQUEST_TIMEOUT_MS');
  });

  it('fails when the port range holds fewer ports than workers', () => {
    const error = errorOf({ MEDIASOUP_WORKERS: '4', RTC_MIN_PORT: '40000', RTC_MAX_PORT: '40002' });
    expect(error.message).toContain('MEDIASOUP_WORKERS');
    expect(error.message).toContain('holds 3');
  });

  it('pipe transports: off unless MEDIASOUP_PIPE_LISTEN_IP is set, which needs a port the WebRtcServers leave and a reachable address', () => {
    expect(loadConfig({}).media.pipe).toBeUndefined();
    expect(loadConfig({}).media.maxPipeTransportsPerRouter).toBe(32);
    const on = loadConfig({ MEDIASOUP_WORKERS: '2', RTC_MIN_PORT: '40000', RTC_MAX_PORT: '40002', MEDIASOUP_PIPE_LISTEN_IP: 'fly-local-6pn', MEDIASOUP_PIPE_ANNOUNCED_IP: 'fdaa:0:1:a7b:1::2' });
    expect(on.media.pipe).toEqual({ listenIp: 'fly-local-6pn', announcedIp: 'fdaa:0:1:a7b:1::2' });
    const full = errorOf({ MEDIASOUP_WORKERS: '2', RTC_MIN_PORT: '40000', RTC_MAX_PORT: '40001', MEDIASOUP_PIPE_LISTEN_IP: '10.0.0.1' });
    expect(full.message).toContain('RTC_MAX_PORT');
    expect(full.message).toContain('pipe transports');
    expect(errorOf({ MEDIASOUP_PIPE_LISTEN_IP: '0.0.0.0' }).message).toContain('MEDIASOUP_PIPE_ANNOUNCED_IP');
    expect(loadConfig({ MEDIASOUP_PIPE_LISTEN_IP: '::', MEDIASOUP_PIPE_ANNOUNCED_IP: 'fdaa::2' }).media.pipe?.listenIp).toBe('::');
    expect(errorOf({ MEDIASOUP_PIPE_ANNOUNCED_IP: '10.0.0.1' }).message).toContain('MEDIASOUP_PIPE_LISTEN_IP');
    expect(errorOf({ MEDIASOUP_PIPE_LISTEN_IP: 'not a host!' }).message).toContain('MEDIASOUP_PIPE_LISTEN_IP');
    expect(errorOf({ MEDIASOUP_MAX_PIPE_TRANSPORTS_PER_ROUTER: '0' }).message).toContain('MEDIASOUP_MAX_PIPE_TRANSPORTS_PER_ROUTER');
    expect(errorOf({ MEDIASOUP_MAX_PIPE_TRANSPORTS_PER_ROUTER: '1025' }).message).toContain('MEDIASOUP_MAX_PIPE_TRANSPORTS_PER_ROUTER');
  });

  it('MEDIASOUP_PIPE_PEER_CIDRS: comma-separated IPv4 and IPv6 CIDRs, each checked, at most 64', () => {
    const pipe = { MEDIASOUP_PIPE_LISTEN_IP: '127.0.0.1', RTC_MIN_PORT: '40000', RTC_MAX_PORT: '40010', MEDIASOUP_WORKERS: '1' };
    expect(loadConfig(pipe).media.pipe?.peerCidrs).toBeUndefined();
    expect(loadConfig({ ...pipe, MEDIASOUP_PIPE_PEER_CIDRS: ' fdaa::/16, 10.1.0.0/16 ,127.0.0.1/32' }).media.pipe?.peerCidrs).toEqual([
      { network: 'fdaa::', prefix: 16, family: 'ipv6' },
      { network: '10.1.0.0', prefix: 16, family: 'ipv4' },
      { network: '127.0.0.1', prefix: 32, family: 'ipv4' },
    ]);
    for (const bad of ['10.0.0.0', '10.0.0.0/33', 'fdaa::/129', 'relay-b/24', '10.0.0.0/8,', '10.0.0.0/8,,fdaa::/16', Array.from({ length: 65 }, (_, i) => `10.0.${i}.0/24`).join(',')]) {
      const error = errorOf({ ...pipe, MEDIASOUP_PIPE_PEER_CIDRS: bad });
      expect(error.message, bad).toContain('MEDIASOUP_PIPE_PEER_CIDRS');
    }
  });

  it('refuses the embedded database and a weak internal token in production', () => {
    const error = errorOf({ NODE_ENV: 'production' });
    expect(error.message).toContain('DATABASE_URL');
    expect(error.message).toContain('INTERNAL_TOKEN');
    const ok = loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://u@h/db', INTERNAL_TOKEN: 'x'.repeat(32), AUTH_KEY_SECRET: 'k'.repeat(32), MEDIASOUP_ANNOUNCED_IP: '203.0.113.7', AUTH_ISSUER: 'https://chat.example' });
    expect(ok.nodeEnv).toBe('production');
  });

  it('reads the password reset budgets per client address (issue 32 #6)', () => {
    expect(loadConfig({}).passwordReset).toEqual({ requestsPerSource: 10, guessesPerSource: 10 });
    expect(loadConfig({ PASSWORD_RESET_REQUESTS_PER_SOURCE: '0', PASSWORD_RESET_GUESSES_PER_SOURCE: '25' }).passwordReset).toEqual({ requestsPerSource: 0, guessesPerSource: 25 });
    expect(errorOf({ PASSWORD_RESET_REQUESTS_PER_SOURCE: '-1' }).message).toContain('PASSWORD_RESET_REQUESTS_PER_SOURCE');
    expect(errorOf({ PASSWORD_RESET_GUESSES_PER_SOURCE: '10001' }).message).toContain('PASSWORD_RESET_GUESSES_PER_SOURCE');
  });

  it('requires AUTH_KEY_SECRET (at least 32 characters) in production, and refuses a short one anywhere (issue 32 #5)', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://u@h/db', INTERNAL_TOKEN: 'x'.repeat(32), MEDIASOUP_ANNOUNCED_IP: '203.0.113.7', AUTH_ISSUER: 'https://chat.example' };
    expect(errorOf(production).issues).toEqual([expect.stringMatching(/^AUTH_KEY_SECRET: must be set to at least 32 characters when NODE_ENV=production/)]);
    expect(errorOf({ ...production, AUTH_KEY_SECRET: 'k'.repeat(31) }).issues).toEqual(['AUTH_KEY_SECRET: must be at least 32 characters']);
    expect(errorOf({ AUTH_KEY_SECRET: 'short' }).issues).toEqual(['AUTH_KEY_SECRET: must be at least 32 characters']);
    expect(loadConfig({ ...production, AUTH_KEY_SECRET: ` ${'k'.repeat(32)} ` }).authKeySecret).toBe('k'.repeat(32));
    // Outside production it may be unset: the server then generates one under DATA_DIR.
    expect(loadConfig({}).authKeySecret).toBeUndefined();
    expect(loadConfig({}).dataDir).toBe('./.data');
    // Never echoed in an error.
    expect(errorOf({ AUTH_KEY_SECRET: 'tooshort-secret-value' }).message).not.toContain('tooshort-secret-value');
  });

  it('requires AUTH_ISSUER in production unless FLY_APP_NAME gives it, so instances on other ports agree on the issuer', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://u@h/db', INTERNAL_TOKEN: 'x'.repeat(32), AUTH_KEY_SECRET: 'k'.repeat(32), MEDIASOUP_ANNOUNCED_IP: '203.0.113.7' };
    expect(errorOf(production).issues).toEqual([expect.stringMatching(/^AUTH_ISSUER: must be set when NODE_ENV=production/)]);
    expect(loadConfig({ ...production, FLY_APP_NAME: 'chat-app' }).auth.issuer).toBe('https://chat-app.fly.dev');
    expect(loadConfig({ ...production, AUTH_ISSUER: 'https://chat.example.com' }).auth.issuer).toBe('https://chat.example.com');
    // Outside production the default stays, for a development start on any port.
    expect(loadConfig({ PORT: '3100' }).auth.issuer).toBe('http://localhost:3100');
  });

  it('refuses, in production, to announce a wildcard listen address in the ICE candidates', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://u@h/db', INTERNAL_TOKEN: 'x'.repeat(32), AUTH_KEY_SECRET: 'k'.repeat(32), AUTH_ISSUER: 'https://chat.example' };
    const wildcards: Record<string, string>[] = [{}, { MEDIASOUP_LISTEN_IP: '::' }, { MEDIASOUP_LISTEN_IP: '10.0.0.5', MEDIASOUP_UDP_LISTEN_IP: '0:0::0' }];
    for (const listen of wildcards) {
      const error = errorOf({ ...production, ...listen });
      expect(error.issues, JSON.stringify(listen)).toEqual([expect.stringMatching(/^MEDIASOUP_ANNOUNCED_IP: must be set when NODE_ENV=production/)]);
    }
    // What docs/deploy-fly.md sets: fly.toml's listen addresses plus the dedicated IPv4 as a secret.
    const fly = { ...production, MEDIASOUP_LISTEN_IP: '0.0.0.0', MEDIASOUP_UDP_LISTEN_IP: 'fly-global-services', MEDIASOUP_ANNOUNCED_IP: '137.66.1.2' };
    expect(loadConfig(fly).media.announcedIp).toBe('137.66.1.2');
    // A specific listen address is what the candidates carry: nothing to announce.
    expect(loadConfig({ ...production, MEDIASOUP_LISTEN_IP: '10.0.0.5' }).media.announcedIp).toBeUndefined();
    // Development runs either way (the media service logs a warning instead).
    expect(loadConfig({}).media.listenIp).toBe('0.0.0.0');
  });

  it('accepts only an IP address as MEDIASOUP_ANNOUNCED_IP', () => {
    expect(loadConfig({ MEDIASOUP_ANNOUNCED_IP: ' 2001:db8::7 ' }).media.announcedIp).toBe('2001:db8::7');
    expect(loadConfig({ MEDIASOUP_ANNOUNCED_IP: '' }).media.announcedIp).toBeUndefined();
    for (const bad of ['relay.example.com', '203.0.113', '203.0.113.7:40000']) {
      expect(errorOf({ MEDIASOUP_ANNOUNCED_IP: bad }).message, bad).toContain('MEDIASOUP_ANNOUNCED_IP');
    }
  });

  it('enables the private internal listener only with INTERNAL_PORT', () => {
    expect(loadConfig({}).internalListener).toBeUndefined();
    expect(loadConfig({ INTERNAL_PORT: '3001' }).internalListener).toEqual({ host: '127.0.0.1', port: 3001 });
    expect(loadConfig({ INTERNAL_PORT: '3001', INTERNAL_HOST: 'fly-local-6pn' }).internalListener).toEqual({ host: 'fly-local-6pn', port: 3001 });
    expect(errorOf({ PORT: '3000', INTERNAL_PORT: '3000' }).message).toContain('INTERNAL_PORT');
  });

  it('reports a variable several areas read once, and the problems of every area in one go', () => {
    expect(errorOf({ NODE_ENV: 'prod' }).issues).toEqual([expect.stringMatching(/^NODE_ENV: /)]);
    const error = errorOf({ PORT: 'abc', EVENTS_WEBHOOK_URL: 'https://hooks.example.com/x' });
    expect(error.issues).toEqual([expect.stringMatching(/^PORT: /), expect.stringMatching(/^EVENTS_WEBHOOK_SECRET: must be set/)]);
  });
});
