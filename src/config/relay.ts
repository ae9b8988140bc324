// The media relay: mediasoup workers, their ports and addresses, per-router caps and cascading.
import { isIP } from 'node:net';
import os from 'node:os';
import { z } from 'zod';
import { int, optionalString } from './env.js';
import { serverVariables } from './server.js';

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
  .transform((value, ctx): readonly PipePeerCidr[] => {
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

/** 0.0.0.0 or :: (in any spelling): an address to listen on, never one a client can reach. */
export function isUnspecifiedIp(ip: string | undefined): boolean {
  if (ip === undefined) return false;
  const version = isIP(ip);
  return (version === 4 && ip === '0.0.0.0') || (version === 6 && /^[0:]+$/.test(ip));
}

export const relayVariables = {
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
  // Plain RTP in and out of a room (docs/media-relay.md "Recording and plain RTP"): ffmpeg, GStreamer or
  // an OBS bridge. Loopback by default: RTP without SRTP should not leave the machine unless asked to.
  MEDIASOUP_PLAIN_LISTEN_IP: z.ipv4().or(z.ipv6()).default('127.0.0.1'),
  MEDIASOUP_PLAIN_ANNOUNCED_IP: optionalString.pipe(z.ipv4().or(z.ipv6()).optional()),
  // A recording holds one per track; an ingest bridge one per stream it sends.
  MEDIASOUP_MAX_PLAIN_TRANSPORTS_PER_ROUTER: int(16, 1, 1024),
  // Recordings (docs/media-relay.md "Recording and plain RTP"): one ffmpeg each, files named by id.
  RECORDINGS_DIR: z.string().min(1).max(1024).default('./.data/recordings'),
  // Sized from the benchmark (bench/RESULTS.md, "Recordings"): one recorded ~1 Mbit/s track
  // costs 0.25-0.37 % of a core (ffmpeg's stream copy plus the relay's forwarding), so about 60 % of one
  // core holds 160; 150, each ffmpeg ~14 MB (PSS). Each recorded track also takes two ports of the RTC range.
  RECORDINGS_MAX: int(150, 1, 1000),
  RECORDINGS_MIN_FREE_MB: int(1024, 0, 100_000_000),
  RECORDINGS_MAX_DURATION_S: int(14_400, 1, 604_800),
  // An ffmpeg whose file has not grown for this long while its RTP keeps coming is hung (stopped, stuck
  // on its disk): it is killed and the recording fails. ffmpeg writes every packet through (-flush_packets 1),
  // so a live one grows at least once a second; at least 3 s so one slow tick under load does not reap it.
  RECORDINGS_STALL_S: int(10, 3, 300),
  // Upload to S3-compatible storage (Tigris, AWS S3, MinIO) when a bucket is set; credentials are the
  // AWS SDK's own (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, ...), read by the SDK, never logged.
  RECORDINGS_S3_BUCKET: optionalString.pipe(z.string().min(3).max(63).regex(/^[a-z0-9][a-z0-9.-]+[a-z0-9]$/, 'an S3 bucket name').optional()),
  RECORDINGS_S3_ENDPOINT: optionalString.pipe(z.url({ protocol: /^https?$/ }).max(2048).optional()),
  RECORDINGS_S3_REGION: z.string().min(1).max(64).default('auto'),
  RECORDINGS_KEEP_LOCAL: z.enum(['0', '1']).default('0'),
  // A room's new transports stay on the worker that holds it until that worker carries this many
  // consumers, then spread to the least-loaded worker (docs/media-relay.md, "Scaling out").
  MEDIASOUP_WORKER_MAX_CONSUMERS: int(400, 1, 1_000_000),
  // WHIP/WHEP (docs/media-relay.md "WHIP and WHEP"): the public origin endpoint URLs are made of (unset:
  // the forwarded host under TRUST_PROXY, else the Host the internal call came with), and the caps.
  WHIP_PUBLIC_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).max(2048).optional()),
  WHIP_MAX_SESSIONS_PER_ENDPOINT: int(1, 1, 1000),
  WHEP_MAX_SESSIONS_PER_ENDPOINT: int(100, 1, 10_000),
  WHIP_MAX_ENDPOINTS_PER_ROUTER: int(64, 1, 10_000),
  WHEP_MAX_ENDPOINTS_PER_ROUTER: int(64, 1, 10_000),
};

// NODE_ENV belongs to the server slice; read here to refuse announcing a wildcard address in production.
export const relayConfig = z
  .object({ NODE_ENV: serverVariables.NODE_ENV, ...relayVariables })
  .superRefine((env, ctx) => {
    const rtcPorts = env.RTC_MAX_PORT - env.RTC_MIN_PORT + 1;
    const range = `RTC_MIN_PORT-RTC_MAX_PORT (${env.RTC_MIN_PORT}-${env.RTC_MAX_PORT})`;
    if (env.RTC_MAX_PORT < env.RTC_MIN_PORT) {
      ctx.addIssue({ code: 'custom', path: ['RTC_MAX_PORT'], message: 'must be >= RTC_MIN_PORT' });
    } else if (rtcPorts < env.MEDIASOUP_WORKERS) {
      ctx.addIssue({
        code: 'custom',
        path: ['MEDIASOUP_WORKERS'],
        message: `${env.MEDIASOUP_WORKERS} workers need ${env.MEDIASOUP_WORKERS} ports but ${range} holds ${rtcPorts}`,
      });
    }
    if (env.MEDIASOUP_PIPE_LISTEN_IP !== undefined) {
      // Pipe transports take their ports from what the WebRtcServers (RTC_MIN_PORT + worker index) leave.
      if (rtcPorts <= env.MEDIASOUP_WORKERS) {
        ctx.addIssue({
          code: 'custom',
          path: ['RTC_MAX_PORT'],
          message: `must leave ports for pipe transports when MEDIASOUP_PIPE_LISTEN_IP is set: ${range} holds ${rtcPorts} ports, all taken by the ${env.MEDIASOUP_WORKERS} workers' WebRtcServers`,
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
    if (env.MEDIASOUP_PLAIN_ANNOUNCED_IP === undefined && isUnspecifiedIp(env.MEDIASOUP_PLAIN_LISTEN_IP)) {
      ctx.addIssue({
        code: 'custom',
        path: ['MEDIASOUP_PLAIN_ANNOUNCED_IP'],
        message: 'must be set when MEDIASOUP_PLAIN_LISTEN_IP is a wildcard address (0.0.0.0 or ::): an RTP sender cannot be told to send there',
      });
    }
    if (env.RECORDINGS_S3_ENDPOINT !== undefined && env.RECORDINGS_S3_BUCKET === undefined) {
      ctx.addIssue({ code: 'custom', path: ['RECORDINGS_S3_BUCKET'], message: 'must be set when RECORDINGS_S3_ENDPOINT is set (recordings are uploaded to it)' });
    }
    if (env.MEDIASOUP_RESTART_MAX_MS < env.MEDIASOUP_RESTART_BASE_MS) {
      ctx.addIssue({ code: 'custom', path: ['MEDIASOUP_RESTART_MAX_MS'], message: 'must be >= MEDIASOUP_RESTART_BASE_MS' });
    }
    if (
      env.NODE_ENV === 'production' &&
      !env.MEDIASOUP_ANNOUNCED_IP &&
      (isUnspecifiedIp(env.MEDIASOUP_LISTEN_IP) || isUnspecifiedIp(env.MEDIASOUP_UDP_LISTEN_IP))
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['MEDIASOUP_ANNOUNCED_IP'],
        message:
          'must be set when NODE_ENV=production and the workers listen on a wildcard address (MEDIASOUP_LISTEN_IP or MEDIASOUP_UDP_LISTEN_IP 0.0.0.0 or ::): the ICE candidates would carry that address, which no client can reach',
      });
    }
  })
  .transform((env) => ({
    /** The relay's recordings (src/relay/recordings/). */
    recordings: {
      dir: env.RECORDINGS_DIR,
      max: env.RECORDINGS_MAX,
      minFreeMb: env.RECORDINGS_MIN_FREE_MB,
      maxDurationS: env.RECORDINGS_MAX_DURATION_S,
      stallS: env.RECORDINGS_STALL_S,
      /** Undefined unless RECORDINGS_S3_BUCKET is set. */
      s3:
        env.RECORDINGS_S3_BUCKET === undefined
          ? undefined
          : { bucket: env.RECORDINGS_S3_BUCKET, endpoint: env.RECORDINGS_S3_ENDPOINT, region: env.RECORDINGS_S3_REGION, keepLocal: env.RECORDINGS_KEEP_LOCAL === '1' },
    },
    media: {
      workers: env.MEDIASOUP_WORKERS,
      logLevel: env.MEDIASOUP_LOG_LEVEL,
      rtcMinPort: env.RTC_MIN_PORT,
      rtcMaxPort: env.RTC_MAX_PORT,
      listenIp: env.MEDIASOUP_LISTEN_IP,
      /** An IP or a host name, resolved to IPv4 once at start-up. */
      udpListenIp: env.MEDIASOUP_UDP_LISTEN_IP,
      announcedIp: env.MEDIASOUP_ANNOUNCED_IP,
      restartBaseMs: env.MEDIASOUP_RESTART_BASE_MS,
      restartMaxMs: env.MEDIASOUP_RESTART_MAX_MS,
      maxRouters: env.MEDIASOUP_MAX_ROUTERS,
      maxTransportsPerRouter: env.MEDIASOUP_MAX_TRANSPORTS_PER_ROUTER,
      maxProducersPerRouter: env.MEDIASOUP_MAX_PRODUCERS_PER_ROUTER,
      maxConsumersPerRouter: env.MEDIASOUP_MAX_CONSUMERS_PER_ROUTER,
      /**
       * Pipe transports to other relays (cascading): where they listen and what the other relays are
       * told; undefined when MEDIASOUP_PIPE_LISTEN_IP is unset (no pipe transport then). Host names
       * are resolved when a pipe transport is made.
       */
      pipe:
        env.MEDIASOUP_PIPE_LISTEN_IP === undefined
          ? undefined
          : { listenIp: env.MEDIASOUP_PIPE_LISTEN_IP, announcedIp: env.MEDIASOUP_PIPE_ANNOUNCED_IP, peerCidrs: env.MEDIASOUP_PIPE_PEER_CIDRS },
      maxPipeTransportsPerRouter: env.MEDIASOUP_MAX_PIPE_TRANSPORTS_PER_ROUTER,
      /** Plain RTP transports (ingest, recordings): where they listen and the address they announce. */
      plain: { listenIp: env.MEDIASOUP_PLAIN_LISTEN_IP, announcedIp: env.MEDIASOUP_PLAIN_ANNOUNCED_IP },
      maxPlainTransportsPerRouter: env.MEDIASOUP_MAX_PLAIN_TRANSPORTS_PER_ROUTER,
      /** Consumers a worker carries before a room's new transports go to another worker. */
      workerMaxConsumers: env.MEDIASOUP_WORKER_MAX_CONSUMERS,
      /** Data producers and data consumers one transport may hold together. */
      maxDataChannelsPerTransport: env.MEDIASOUP_MAX_DATA_CHANNELS_PER_TRANSPORT,
      maxWhipEndpointsPerRouter: env.WHIP_MAX_ENDPOINTS_PER_ROUTER,
      maxWhepEndpointsPerRouter: env.WHEP_MAX_ENDPOINTS_PER_ROUTER,
      /** WHIP/WHEP endpoints (src/relay/kinds/whip/): their public origin and sessions per endpoint. */
      whip: {
        /** Without a trailing slash; undefined: taken from the internal request (forwarded host under TRUST_PROXY). */
        publicUrl: env.WHIP_PUBLIC_URL?.replace(/\/+$/, ''),
        maxSessionsPerEndpoint: { whip: env.WHIP_MAX_SESSIONS_PER_ENDPOINT, whep: env.WHEP_MAX_SESSIONS_PER_ENDPOINT },
      },
    },
  }));
