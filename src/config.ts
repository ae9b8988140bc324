// The only reader of process.env: parsed once with zod, failing fast with the variable's name.
import { isIP } from 'node:net';
import os from 'node:os';
import { z } from 'zod';
import { AUTH_KEY_SECRET_MIN_LENGTH } from './secrets/auth-key.js';

const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(def);

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** An IP literal, or a host name (e.g. Fly.io's `fly-local-6pn`) resolved when a pipe transport is made. */
const pipeAddress = z
  .ipv4()
  .or(z.ipv6())
  .or(
    z
      .string()
      .max(253)
      .regex(/^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/, 'must be an IP address or a host name'),
  );

/** One range of MEDIASOUP_PIPE_PEER_CIDRS. */
export interface PipePeerCidr {
  network: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** Comma-separated IPv4 and IPv6 CIDRs (at most 64) that pipe transports may connect to. */
const pipePeerCidrs = z
  .string()
  .max(4096)
  .transform((value, ctx): PipePeerCidr[] => {
    const entries = value.split(',').map((v) => v.trim());
    if (entries.length > 64) ctx.addIssue({ code: 'custom', message: 'at most 64 CIDRs' });
    const cidrs: PipePeerCidr[] = [];
    for (const entry of entries) {
      const family = z.cidrv4().safeParse(entry).success ? 'ipv4' : z.cidrv6().safeParse(entry).success ? 'ipv6' : undefined;
      if (!family) {
        ctx.addIssue({ code: 'custom', message: `"${entry.slice(0, 64)}" is not an IPv4 or IPv6 CIDR (such as 10.0.0.0/8 or fdaa::/16)` });
        continue;
      }
      const slash = entry.lastIndexOf('/');
      cidrs.push({ network: entry.slice(0, slash), prefix: Number(entry.slice(slash + 1)), family });
    }
    return cidrs;
  });

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
    LOGIN_FAILURES_PER_ACCOUNT: int(10),
    LOGIN_FAILURE_WINDOW_S: int(900, 1, 86_400),
    REFRESH_REUSE_GRACE_S: int(10, 0, 3600),
    PASSWORD_HASH_MAX_WAIT_MS: int(2000, 1, 60_000),
    // Per client address and hour (docs/account-api.md, "Who can block a password reset"); 0 disables.
    PASSWORD_RESET_REQUESTS_PER_SOURCE: int(10, 0, 10_000),
    PASSWORD_RESET_GUESSES_PER_SOURCE: int(10, 0, 10_000),
    REDIS_URL: optionalString,
    HTTP_HEADERS_TIMEOUT_MS: int(10_000, 1000, 600_000),
    HTTP_REQUEST_TIMEOUT_MS: int(30_000, 1000, 3_600_000),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: int(5000, 1000, 600_000),
    HTTP_CONNECTIONS_CHECK_MS: int(1000, 100, 30_000),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    INTERNAL_TOKEN: optionalString,
    // The one server-side secret (src/secrets/auth-key.ts): keys reset-code digests; never in the database.
    AUTH_KEY_SECRET: optionalString,
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
    // Data producers + data consumers of one transport; at most its 1024 SCTP streams.
    MEDIASOUP_MAX_DATA_CHANNELS_PER_TRANSPORT: int(256, 1, 1024),
    EVENTS_BUFFER_SIZE: int(10_000, 100, 1_000_000),
    EVENTS_SUBSCRIBER_MAX_QUEUED: int(1_000, 10, 1_000_000),
    EVENTS_HEARTBEAT_S: int(15, 1, 300),
    EVENTS_MAX_STREAMS: int(50, 1, 10_000),
    EVENTS_WEBHOOK_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).max(2048).optional()),
    EVENTS_WEBHOOK_SECRET: optionalString.pipe(z.string().max(1024).optional()),
    EVENTS_WEBHOOK_BATCH_MAX: int(100, 1, 1_000),
    EVENTS_WEBHOOK_QUEUE_MAX: int(10_000, 1, 1_000_000),
    AUTH_EVENTS_RETENTION_DAYS: int(90, 1, 36500),
    // SIGTERM waits this long for the open rooms to end before closing them; 0: shut down at once.
    DRAIN_TIMEOUT_S: int(30, 0, 3600),
    // smtp:// or smtps://, credentials in the URL (never logged). Unset: no mail (see Config['mail']).
    SMTP_URL: optionalString.pipe(
      z
        .string()
        .refine((v) => URL.canParse(v) && ['smtp:', 'smtps:'].includes(new URL(v).protocol), 'must be an smtp:// or smtps:// URL')
        .optional(),
    ),
    MAIL_FROM: z.string().trim().min(3).max(254).default('chat-backend <no-reply@localhost>'),
    // Sized for a large room (docs/media-relay.md, "Per-router caps"): 250 participants with a send and
    // a recv transport; 4 producers each (mic, camera, screen video and audio); 100 participants who all
    // receive each other's audio and video (100 × 99 × 2 = 19,800 consumers).
    MEDIASOUP_MAX_TRANSPORTS_PER_ROUTER: int(500, 1),
    MEDIASOUP_MAX_PRODUCERS_PER_ROUTER: int(1000, 1),
    MEDIASOUP_MAX_CONSUMERS_PER_ROUTER: int(20000, 1),
    // Cascading (docs/media-relay.md "Cascading relays"): unset, the relay opens no pipe transport.
    // An IP or a host name such as Fly.io's `fly-local-6pn`, resolved when a pipe transport is made.
    MEDIASOUP_PIPE_LISTEN_IP: optionalString.pipe(pipeAddress.optional()),
    MEDIASOUP_PIPE_ANNOUNCED_IP: optionalString.pipe(pipeAddress.optional()),
    // Where pipe transports may connect to (e.g. Fly.io's 6PN fdaa::/16); unset: any unicast address.
    MEDIASOUP_PIPE_PEER_CIDRS: optionalString.pipe(pipePeerCidrs.optional()),
    // One pipe transport per other relay the room reaches (the typed client reuses one per pair of rooms).
    MEDIASOUP_MAX_PIPE_TRANSPORTS_PER_ROUTER: int(32, 1, 1024),
    // A room's new transports stay on the worker that holds it until that worker carries this many
    // consumers, then spread to the least-loaded worker (docs/media-relay.md, "Scaling out").
    MEDIASOUP_WORKER_MAX_CONSUMERS: int(400, 1, 1_000_000),
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
    if (env.MEDIASOUP_PIPE_LISTEN_IP !== undefined) {
      // Pipe transports take their ports from what the WebRtcServers (RTC_MIN_PORT + worker index) leave.
      if (env.RTC_MAX_PORT - env.RTC_MIN_PORT + 1 <= env.MEDIASOUP_WORKERS) {
        ctx.addIssue({
          code: 'custom',
          path: ['RTC_MAX_PORT'],
          message: `must leave ports for pipe transports when MEDIASOUP_PIPE_LISTEN_IP is set: RTC_MIN_PORT-RTC_MAX_PORT (${env.RTC_MIN_PORT}-${env.RTC_MAX_PORT}) holds ${env.RTC_MAX_PORT - env.RTC_MIN_PORT + 1} ports, all taken by the ${env.MEDIASOUP_WORKERS} workers' WebRtcServers`,
        });
      }
      if (env.MEDIASOUP_PIPE_ANNOUNCED_IP === undefined && isUnspecifiedIp(env.MEDIASOUP_PIPE_LISTEN_IP)) {
        ctx.addIssue({
          code: 'custom',
          path: ['MEDIASOUP_PIPE_ANNOUNCED_IP'],
          message: 'must be set when MEDIASOUP_PIPE_LISTEN_IP is a wildcard address (0.0.0.0 or ::): other relays cannot connect to it',
        });
      }
    } else if (env.MEDIASOUP_PIPE_ANNOUNCED_IP !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['MEDIASOUP_PIPE_LISTEN_IP'], message: 'must be set when MEDIASOUP_PIPE_ANNOUNCED_IP is set' });
    }
    if (env.INTERNAL_PORT !== undefined && env.INTERNAL_PORT !== 0 && env.INTERNAL_PORT === env.PORT) {
      ctx.addIssue({ code: 'custom', path: ['INTERNAL_PORT'], message: 'must differ from PORT' });
    }
    if (env.HTTP_REQUEST_TIMEOUT_MS < env.HTTP_HEADERS_TIMEOUT_MS) {
      // Node refuses a headersTimeout above requestTimeout.
      ctx.addIssue({ code: 'custom', path: ['HTTP_REQUEST_TIMEOUT_MS'], message: 'must be >= HTTP_HEADERS_TIMEOUT_MS' });
    }
    if (env.REDIS_URL !== undefined && !/^rediss?:\/\//.test(env.REDIS_URL)) {
      ctx.addIssue({ code: 'custom', path: ['REDIS_URL'], message: 'must be a redis:// or rediss:// URL' });
    }
    if (env.MEDIASOUP_RESTART_MAX_MS < env.MEDIASOUP_RESTART_BASE_MS) {
      ctx.addIssue({ code: 'custom', path: ['MEDIASOUP_RESTART_MAX_MS'], message: 'must be >= MEDIASOUP_RESTART_BASE_MS' });
    }
    if (env.EVENTS_SUBSCRIBER_MAX_QUEUED > env.EVENTS_BUFFER_SIZE) {
      ctx.addIssue({
        code: 'custom',
        path: ['EVENTS_SUBSCRIBER_MAX_QUEUED'],
        message: 'must be <= EVENTS_BUFFER_SIZE (a stream resumes from the buffer after it is cut off)',
      });
    }
    if (env.EVENTS_WEBHOOK_URL && !env.EVENTS_WEBHOOK_SECRET) {
      ctx.addIssue({ code: 'custom', path: ['EVENTS_WEBHOOK_SECRET'], message: 'must be set when EVENTS_WEBHOOK_URL is set (deliveries are signed)' });
    }
    if (env.NODE_ENV === 'production' && env.EVENTS_WEBHOOK_URL && env.EVENTS_WEBHOOK_SECRET && env.EVENTS_WEBHOOK_SECRET.length < 32) {
      ctx.addIssue({ code: 'custom', path: ['EVENTS_WEBHOOK_SECRET'], message: 'must be at least 32 characters when NODE_ENV=production' });
    }
    if (env.AUTH_KEY_SECRET !== undefined && env.AUTH_KEY_SECRET.length < AUTH_KEY_SECRET_MIN_LENGTH) {
      ctx.addIssue({ code: 'custom', path: ['AUTH_KEY_SECRET'], message: `must be at least ${AUTH_KEY_SECRET_MIN_LENGTH} characters` });
    }
    if (env.NODE_ENV === 'production') {
      if (!env.AUTH_KEY_SECRET) {
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH_KEY_SECRET'],
          message: `must be set to at least ${AUTH_KEY_SECRET_MIN_LENGTH} characters when NODE_ENV=production (it keys the reset-code digests; it is never stored in the database)`,
        });
      }
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
  auth: {
    accessTokenTtl: number;
    refreshTokenTtl: number;
    /** auth_events rows older than this are pruned. */
    eventsRetentionDays: number;
    /** Seconds after its rotation during which a refresh token presented again is a lost race, not reuse. */
    refreshReuseGraceS: number;
    /** Failed logins and password changes allowed per account and window; 0 disables. */
    failuresPerAccount: number;
    failureWindowS: number;
    /** Beyond this expected wait for an argon2 slot a request answers 503 instead of queueing. */
    hashMaxWaitMs: number;
  };
  /** Per-client budgets of the password reset endpoints, per hour; 0 disables. */
  passwordReset: {
    /** POST /password/forgot requests per client address (at most 3 of them for one e-mail address). */
    requestsPerSource: number;
    /** POST /password/reset failures (wrong codes) per client address. */
    guessesPerSource: number;
  };
  rateLimit: {
    authPerMin: number;
    refreshPerMin: number;
    apiPerMin: number;
    trustProxy: Env['TRUST_PROXY'];
    /** Counters shared by every instance in this Redis; undefined: in this process's memory. */
    redisUrl: string | undefined;
  };
  /** Node's HTTP server timeouts, milliseconds. */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number; connectionsCheckingIntervalMs: number };
  logLevel: Env['LOG_LEVEL'];
  /** Undefined when not configured; the server then generates one and prints it once. */
  internalToken: string | undefined;
  /**
   * AUTH_KEY_SECRET, at least 32 characters; undefined only outside production, where the server
   * then generates one and keeps it under `dataDir` (src/secrets/auth-key.ts).
   */
  authKeySecret: string | undefined;
  /** DATA_DIR: the embedded database's folder, and where generated development secrets are kept. */
  dataDir: string;
  /** How long SIGTERM waits for the last router to close before closing them (`shutdown`); 0: no drain. */
  drainTimeoutS: number;
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
    /**
     * Pipe transports to other relays (cascading): where they listen and what the other relays are
     * told; undefined when MEDIASOUP_PIPE_LISTEN_IP is unset (no pipe transport then). Host names
     * are resolved when a pipe transport is made.
     */
    pipe: { listenIp: string; announcedIp: string | undefined; peerCidrs: readonly PipePeerCidr[] | undefined } | undefined;
    maxPipeTransportsPerRouter: number;
    /** Consumers a worker carries before a room's new transports go to another worker. */
    workerMaxConsumers: number;
    /** Data producers and data consumers one transport may hold together. */
    maxDataChannelsPerTransport: number;
  };
  /** The relay's event bus and its sinks (src/relay/events/). */
  events: {
    bufferSize: number;
    subscriberMaxQueued: number;
    heartbeatS: number;
    maxStreams: number;
    /** Undefined unless EVENTS_WEBHOOK_URL is set. */
    webhook: { url: string; secret: string; batchMax: number; queueMax: number } | undefined;
  };
  /**
   * Outgoing mail (password reset codes, password-changed notices). Without an SMTP URL, messages
   * go to the log at warn outside production; in production the password reset endpoints answer 1004.
   */
  mail: { smtpUrl: string | undefined; from: string };
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
    auth: {
      accessTokenTtl: env.ACCESS_TOKEN_TTL,
      refreshTokenTtl: env.REFRESH_TOKEN_TTL,
      eventsRetentionDays: env.AUTH_EVENTS_RETENTION_DAYS,
      refreshReuseGraceS: env.REFRESH_REUSE_GRACE_S,
      failuresPerAccount: env.LOGIN_FAILURES_PER_ACCOUNT,
      failureWindowS: env.LOGIN_FAILURE_WINDOW_S,
      hashMaxWaitMs: env.PASSWORD_HASH_MAX_WAIT_MS,
    },
    passwordReset: {
      requestsPerSource: env.PASSWORD_RESET_REQUESTS_PER_SOURCE,
      guessesPerSource: env.PASSWORD_RESET_GUESSES_PER_SOURCE,
    },
    rateLimit: {
      authPerMin: env.RATE_LIMIT_AUTH_PER_MIN,
      refreshPerMin: env.RATE_LIMIT_REFRESH_PER_MIN,
      apiPerMin: env.RATE_LIMIT_API_PER_MIN,
      trustProxy: env.TRUST_PROXY,
      redisUrl: env.REDIS_URL,
    },
    http: {
      headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingIntervalMs: env.HTTP_CONNECTIONS_CHECK_MS,
    },
    logLevel: env.LOG_LEVEL,
    internalToken: env.INTERNAL_TOKEN,
    authKeySecret: env.AUTH_KEY_SECRET,
    dataDir: env.DATA_DIR,
    drainTimeoutS: env.DRAIN_TIMEOUT_S,
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
      workerMaxConsumers: env.MEDIASOUP_WORKER_MAX_CONSUMERS,
      maxDataChannelsPerTransport: env.MEDIASOUP_MAX_DATA_CHANNELS_PER_TRANSPORT,
      pipe:
        env.MEDIASOUP_PIPE_LISTEN_IP === undefined
          ? undefined
          : { listenIp: env.MEDIASOUP_PIPE_LISTEN_IP, announcedIp: env.MEDIASOUP_PIPE_ANNOUNCED_IP, peerCidrs: env.MEDIASOUP_PIPE_PEER_CIDRS },
      maxPipeTransportsPerRouter: env.MEDIASOUP_MAX_PIPE_TRANSPORTS_PER_ROUTER,
    },
    events: {
      bufferSize: env.EVENTS_BUFFER_SIZE,
      subscriberMaxQueued: env.EVENTS_SUBSCRIBER_MAX_QUEUED,
      heartbeatS: env.EVENTS_HEARTBEAT_S,
      maxStreams: env.EVENTS_MAX_STREAMS,
      webhook:
        env.EVENTS_WEBHOOK_URL && env.EVENTS_WEBHOOK_SECRET
          ? { url: env.EVENTS_WEBHOOK_URL, secret: env.EVENTS_WEBHOOK_SECRET, batchMax: env.EVENTS_WEBHOOK_BATCH_MAX, queueMax: env.EVENTS_WEBHOOK_QUEUE_MAX }
          : undefined,
    },
    mail: { smtpUrl: env.SMTP_URL, from: env.MAIL_FROM },
  };
}
