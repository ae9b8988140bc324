// Issue 27 #11: compose.yaml parses, runs PostgreSQL and Redis on 127.0.0.1 only, and the URLs
// .env.example gives for it reach exactly those services (and pass the configuration).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.js';
import { ROOT } from '../support/server-process.js';

interface Service {
  image?: string;
  build?: string;
  network_mode?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  healthcheck?: { test: string[] };
}

const compose = parse(readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8')) as { services: Record<string, Service>; volumes?: Record<string, unknown> };
const example = readFileSync(path.join(ROOT, '.env.example'), 'utf8');

/** The value .env.example suggests for `name` with compose.yaml. */
function composeValue(name: string): string {
  const match = new RegExp(`^# with compose\\.yaml \\(docker compose up -d\\): ${name}=(\\S+)$`, 'm').exec(example);
  if (!match) throw new Error(`.env.example gives no compose.yaml value for ${name}`);
  return match[1]!;
}

describe('compose.yaml', () => {
  it('runs PostgreSQL and Redis, fully named images, published on 127.0.0.1 only, with health checks', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['coturn', 'postgres', 'redis']);
    for (const [name, service] of Object.entries(compose.services)) {
      if (name === 'coturn') continue;
      expect(service.image, name).toMatch(/^docker\.io\/library\/[a-z]+:[0-9][\w.-]*$/);
      expect(service.ports?.length, name).toBeGreaterThan(0);
      for (const port of service.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
      expect(service.healthcheck?.test.length, name).toBeGreaterThan(0);
    }
  });

  // Issue 28: coturn on the host's network (it relays to the media relay's 127.0.0.1), bound to 127.0.0.1 only.
  it("runs coturn from deploy/coturn on 127.0.0.1 only, with .env.example's TURN_SECRET, where TURN_URLS points", () => {
    const coturn = compose.services.coturn!;
    expect(coturn.build).toBe('deploy/coturn');
    expect(coturn.network_mode).toBe('host');
    const flags = coturn.command ?? [];
    const values = (flag: string) => flags.filter((f) => f.startsWith(`--${flag}=`)).map((f) => f.slice(flag.length + 3));
    expect(values('listening-ip')).toEqual(['127.0.0.1']);
    expect(values('relay-ip')).toEqual(['127.0.0.1']);
    expect(flags).toContain('--use-auth-secret');
    expect(flags).toContain('--no-cli');
    expect(values('static-auth-secret')).toEqual([composeValue('TURN_SECRET')]);
    const config = loadConfig({ TURN_URLS: composeValue('TURN_URLS'), TURN_SECRET: composeValue('TURN_SECRET') });
    for (const url of config.turn!.urls) expect(url).toMatch(new RegExp(`^turn:127\\.0\\.0\\.1:${values('listening-port')[0]}\\?transport=(udp|tcp)$`));
  });

  it('gives coturn the shipped peer policy and bounds (deploy/coturn/turnserver.conf.template), with 127.0.0.1 as the relay’s address', () => {
    const flags = compose.services.coturn!.command ?? [];
    const values = (flag: string) => flags.filter((f) => f.startsWith(`--${flag}=`)).map((f) => f.slice(flag.length + 3));
    const template = readFileSync(new URL('../../deploy/coturn/turnserver.conf.template', import.meta.url), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    const shipped = (key: string) => template.filter((line) => line.startsWith(`${key}=`)).map((line) => line.slice(key.length + 1));
    for (const flag of ['no-tcp-relay', 'no-multicast-peers']) {
      expect(template).toContain(flag);
      expect(flags).toContain(`--${flag}`);
    }
    for (const key of ['denied-peer-ip', 'user-quota', 'max-allocate-lifetime', 'stale-nonce', 'max-bps']) expect(values(key), key).toEqual(shipped(key));
    expect(shipped('allowed-peer-ip')).toEqual(['${MEDIASOUP_ANNOUNCED_IP}']);
    expect(values('allowed-peer-ip')).toEqual(['127.0.0.1']);
    expect(Number(values('total-quota')[0])).toBe(Math.floor((Number(values('max-port')[0]) - Number(values('min-port')[0]) + 1) / 2));
  });

  it("is what .env.example's DATABASE_URL and REDIS_URL reach", () => {
    const database = new URL(composeValue('DATABASE_URL'));
    const postgres = compose.services.postgres!;
    expect(decodeURIComponent(database.username)).toBe(postgres.environment?.POSTGRES_USER);
    expect(decodeURIComponent(database.password)).toBe(postgres.environment?.POSTGRES_PASSWORD);
    expect(database.pathname).toBe(`/${postgres.environment?.POSTGRES_DB}`);
    expect(postgres.ports).toContain(`${database.hostname}:${database.port}:5432`);
    const redis = new URL(composeValue('REDIS_URL'));
    expect(compose.services.redis!.ports).toContain(`${redis.hostname}:${redis.port}:6379`);
    const config = loadConfig({ DATABASE_URL: database.toString(), REDIS_URL: redis.toString() });
    expect(config.database.kind).toBe('postgres');
    expect(config.rateLimit.redisUrl).toBe(redis.toString());
  });
});
