// The only reader of process.env: parsed once with zod, failing fast with the variable's name.
import { isIP } from 'node:net';
import os from 'node:os';
import { z } from 'zod';

const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(def);

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const envSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: int(3000, 0, 65535),
    HOST: z.string().min(1).default('0.0.0.0'),
    INTERNAL_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    INTERNAL_HOST: z.string().min(1).default('127.0.0.1'),
    DATABASE_URL: optionalString,
    DATA_DIR: z.string().min(1).default('./.data'),
    ACCESS_TOKEN_TTL: int(7200, 1),
    REFRESH_TOKEN_TTL: int(2592000, 1),
    RATE_LIMIT_AUTH_PER_MIN: int(10),
    RATE_LIMIT_REFRESH_PER_MIN: int(60),
    RATE_LIMIT_API_PER_MIN: int(300),
    TRUST_PROXY: z.enum(['none', 'fly', 'xff']).default('none'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    INTERNAL_TOKEN: optionalString,
    MEDIASOUP_WORKERS: int(os.availableParallelism(), 1, 256),
    MEDIASOUP_LOG_LEVEL: z.enum(['debug', 'warn', 'error', 'none']).default('warn'),
    RTC_MIN_PORT: int(40000, 1, 65535),
    RTC_MAX_PORT: int(40199, 1, 65535),
    MEDIASOUP_LISTEN_IP: z.ipv4().or(z.ipv6()).default('0.0.0.0'),
    MEDIASOUP_UDP_LISTEN_IP: optionalString,
    // An IP literal: mediasoup 3.11 writes it into the ICE candidates as it is, and browsers ignore host names there.
    MEDIASOUP_ANNOUNCED_IP: optionalString.pipe(z.ipv4().or(z.ipv6()).optional()),
    MEDIASOUP_RESTART_BASE_MS: int(500, 1),
    MEDIASOUP_RESTART_MAX_MS: int(30000, 1),
    MEDIASOUP_MAX_ROUTERS: int(500, 1),
    // Sized for a large room (docs/media-relay.md, "Per-router caps"): 250 participants with a send and
    // a recv transport; 4 producers each (mic, camera, screen video and audio); 100 participants who all
    // receive each other's audio and video (100 × 99 × 2 = 19,800 consumers).
    MEDIASOUP_MAX_TRANSPORTS_PER_ROUTER: int(500, 1),
    MEDIASOUP_MAX_PRODUCERS_PER_ROUTER: int(1000, 1),
    MEDIASOUP_MAX_CONSUMERS_PER_ROUTER: int(20000, 1),
  })
  .superRefine((env, ctx) => {
    if (env.RTC_MAX_PORT < env.RTC_MIN_PORT) {
      ctx.addIssue({ code: 'custom', path: ['RTC_MAX_PORT'], message: 'must be >= RTC_MIN_PORT' });
    } else if (env.RTC_MAX_PORT - env.RTC_MIN_PORT + 1 < env.MEDIASOUP_WORKERS) {
      ctx.addIssue({
        code: 'custom',
        path: ['MEDIASOUP_WORKERS'],
        message: `${env.MEDIASOUP_WORKERS} workers need ${env.MEDIASOUP_WORKERS} ports but RTC_MIN_PORT-RTC_MAX_PORT (${env.RTC_MIN_PORT}-${env.RTC_MAX_PORT}) holds ${env.RTC_MAX_PORT - env.RTC_MIN_PORT + 1}`,
      });
    }
    if (env.INTERNAL_PORT !== undefined && env.INTERNAL_PORT !== 0 && env.INTERNAL_PORT === env.PORT) {
      ctx.addIssue({ code: 'custom', path: ['INTERNAL_PORT'], message: 'must differ from PORT' });
    }
    if (env.MEDIASOUP_RESTART_MAX_MS < env.MEDIASOUP_RESTART_BASE_MS) {
      ctx.addIssue({ code: 'custom', path: ['MEDIASOUP_RESTART_MAX_MS'], message: 'must be >= MEDIASOUP_RESTART_BASE_MS' });
    }
    if (env.NODE_ENV === 'production') {
      if (!env.DATABASE_URL || env.DATABASE_URL.startsWith('memory://')) {
        ctx.addIssue({
          code: 'custom',
          path: ['DATABASE_URL'],
          message: 'must point to PostgreSQL when NODE_ENV=production (the embedded database is for development only)',
        });
      }
      if (!env.MEDIASOUP_ANNOUNCED_IP && (isUnspecifiedIp(env.MEDIASOUP_LISTEN_IP) || isUnspecifiedIp(env.MEDIASOUP_UDP_LISTEN_IP))) {
        ctx.addIssue({
          code: 'custom',
          path: ['MEDIASOUP_ANNOUNCED_IP'],
          message:
            'must be set when NODE_ENV=production and the workers listen on a wildcard address (MEDIASOUP_LISTEN_IP or MEDIASOUP_UDP_LISTEN_IP 0.0.0.0 or ::): the ICE candidates would carry that address, which no client can reach',
        });
      }
      if (!env.INTERNAL_TOKEN || env.INTERNAL_TOKEN.length < 32) {
        ctx.addIssue({
          code: 'custom',
          path: ['INTERNAL_TOKEN'],
          message: 'must be set to at least 32 characters when NODE_ENV=production',
        });
      }
    }
  });

export type Env = z.infer<typeof envSchema>;

/** 0.0.0.0 or :: (in any spelling): an address to listen on, never one a client can reach. */
export function isUnspecifiedIp(ip: string | undefined): boolean {
  if (ip === undefined) return false;
  const version = isIP(ip);
  return (version === 4 && ip === '0.0.0.0') || (version === 6 && /^[0:]+$/.test(ip));
}

export interface Config {
  nodeEnv: Env['NODE_ENV'];
  port: number;
  host: string;
  /** When set, /internal/* is served only on this second listener (e.g. Fly's private 6PN address). */
  internalListener: { host: string; port: number } | undefined;
  database: { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string | undefined };
  auth: { accessTokenTtl: number; refreshTokenTtl: number };
  rateLimit: { authPerMin: number; refreshPerMin: number; apiPerMin: number; trustProxy: Env['TRUST_PROXY'] };
  logLevel: Env['LOG_LEVEL'];
  /** Undefined when not configured; the server then generates one and prints it once. */
  internalToken: string | undefined;
  media: {
    workers: number;
    logLevel: Env['MEDIASOUP_LOG_LEVEL'];
    rtcMinPort: number;
    rtcMaxPort: number;
    listenIp: string;
    /** An IP or a host name, resolved to IPv4 once at start-up. */
    udpListenIp: string | undefined;
    announcedIp: string | undefined;
    restartBaseMs: number;
    restartMaxMs: number;
    maxRouters: number;
    maxTransportsPerRouter: number;
    maxProducersPerRouter: number;
    maxConsumersPerRouter: number;
  };
}

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the environment once. Throws ConfigError naming every bad variable.
 * @example const config = loadConfig({ ...process.env, PORT: '0' })
 */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`),
    );
  }
  const env = parsed.data;
  const url = env.DATABASE_URL;
  return {
    nodeEnv: env.NODE_ENV,
    port: env.PORT,
    host: env.HOST,
    internalListener: env.INTERNAL_PORT === undefined ? undefined : { host: env.INTERNAL_HOST, port: env.INTERNAL_PORT },
    database:
      url === undefined
        ? { kind: 'pglite', dataDir: env.DATA_DIR }
        : url.startsWith('memory://')
          ? { kind: 'pglite', dataDir: undefined }
          : { kind: 'postgres', url },
    auth: { accessTokenTtl: env.ACCESS_TOKEN_TTL, refreshTokenTtl: env.REFRESH_TOKEN_TTL },
    rateLimit: {
      authPerMin: env.RATE_LIMIT_AUTH_PER_MIN,
      refreshPerMin: env.RATE_LIMIT_REFRESH_PER_MIN,
      apiPerMin: env.RATE_LIMIT_API_PER_MIN,
      trustProxy: env.TRUST_PROXY,
    },
    logLevel: env.LOG_LEVEL,
    internalToken: env.INTERNAL_TOKEN,
    media: {
      workers: env.MEDIASOUP_WORKERS,
      logLevel: env.MEDIASOUP_LOG_LEVEL,
      rtcMinPort: env.RTC_MIN_PORT,
      rtcMaxPort: env.RTC_MAX_PORT,
      listenIp: env.MEDIASOUP_LISTEN_IP,
      udpListenIp: env.MEDIASOUP_UDP_LISTEN_IP,
      announcedIp: env.MEDIASOUP_ANNOUNCED_IP,
      restartBaseMs: env.MEDIASOUP_RESTART_BASE_MS,
      restartMaxMs: env.MEDIASOUP_RESTART_MAX_MS,
      maxRouters: env.MEDIASOUP_MAX_ROUTERS,
      maxTransportsPerRouter: env.MEDIASOUP_MAX_TRANSPORTS_PER_ROUTER,
      maxProducersPerRouter: env.MEDIASOUP_MAX_PRODUCERS_PER_ROUTER,
      maxConsumersPerRouter: env.MEDIASOUP_MAX_CONSUMERS_PER_ROUTER,
    },
  };
}
