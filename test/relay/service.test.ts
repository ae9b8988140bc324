import { createSocket } from 'node:dgram';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createMedia, type MediaService } from '../../src/relay/media-service.js';
import { allocateRtcPorts } from '../support/app.js';
import { allowSlowTests, waitFor } from './support.js';

allowSlowTests();

const silent = pino({ level: 'silent' });

function mediaConfig(env: Record<string, string> = {}) {
  const workers = Number(env.MEDIASOUP_WORKERS ?? 1);
  const ports = allocateRtcPorts(workers);
  return loadConfig({
    MEDIASOUP_WORKERS: String(workers),
    RTC_MIN_PORT: String(ports.min),
    RTC_MAX_PORT: String(ports.max),
    MEDIASOUP_LISTEN_IP: '127.0.0.1',
    ...env,
  }).media;
}

async function candidates(media: MediaService) {
  const router = await media.createRouter({});
  const { transport } = await media.createTransport({ routerId: router.id, direction: 'send' });
  return transport.iceCandidates;
}

describe('MediaService start-up', () => {
  it('fails with a message naming the port when a WebRtcServer cannot bind, and leaves no worker behind', async () => {
    const config = mediaConfig();
    const first = await createMedia(config, silent);
    try {
      const error = await createMedia(config, silent).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(Error);
      expect(error!.message).toContain(`port ${config.rtcMinPort}`);
      expect(error!.message).toContain('WebRtcServer');
      expect(first.aliveWorkerCount()).toBe(1);
    } finally {
      await first.close();
    }
    // The port is free again once both are gone.
    const again = await createMedia(config, silent);
    await again.close();
  });

  it('refuses a port range smaller than the worker count', async () => {
    const config = { ...mediaConfig(), workers: 3 };
    await expect(createMedia(config, silent)).rejects.toThrow(/3 media workers need 3 ports/);
  });

  it('resolves a host name in MEDIASOUP_UDP_LISTEN_IP to IPv4 once, for UDP only', async () => {
    const media = await createMedia(mediaConfig({ MEDIASOUP_UDP_LISTEN_IP: 'localhost', MEDIASOUP_LISTEN_IP: '0.0.0.0' }), silent);
    try {
      const list = await candidates(media);
      expect(list.find((c) => c.protocol === 'udp')?.ip).toBe('127.0.0.1');
      expect(list.find((c) => c.protocol === 'tcp')?.ip).toBe('0.0.0.0');
    } finally {
      await media.close();
    }
  });

  it('fails clearly when the UDP host name does not resolve', async () => {
    const config = mediaConfig({ MEDIASOUP_UDP_LISTEN_IP: 'no-such-host.invalid' });
    await expect(createMedia(config, silent)).rejects.toThrow(/MEDIASOUP_UDP_LISTEN_IP.*no-such-host\.invalid/);
  });

  it('warns when the ICE candidates would carry a wildcard address, and only then', async () => {
    const warnings = async (env: Record<string, string>) => {
      const lines: { level: number; msg: string }[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      const media = await createMedia(mediaConfig(env), logger);
      await media.close();
      return lines.filter((l) => l.level === 40 && l.msg.startsWith('MEDIASOUP_ANNOUNCED_IP is not set')).length;
    };
    expect(await warnings({ MEDIASOUP_LISTEN_IP: '0.0.0.0' })).toBe(1);
    expect(await warnings({ MEDIASOUP_LISTEN_IP: '127.0.0.1', MEDIASOUP_UDP_LISTEN_IP: '0.0.0.0' })).toBe(1);
    expect(await warnings({ MEDIASOUP_LISTEN_IP: '0.0.0.0', MEDIASOUP_ANNOUNCED_IP: '203.0.113.7' })).toBe(0);
    expect(await warnings({ MEDIASOUP_LISTEN_IP: '127.0.0.1' })).toBe(0);
  });

  it('writes MEDIASOUP_ANNOUNCED_IP into the ICE candidates', async () => {
    const media = await createMedia(mediaConfig({ MEDIASOUP_ANNOUNCED_IP: '203.0.113.7' }), silent);
    try {
      const list = await candidates(media);
      expect(list.map((c) => c.ip)).toEqual(['203.0.113.7', '203.0.113.7']);
    } finally {
      await media.close();
    }
  });
});

describe('restart backoff', () => {
  it('starts over from the base delay once a worker stayed up long enough', async () => {
    const lines: { msg: string; delayMs?: number }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const media = await createMedia(mediaConfig({ MEDIASOUP_RESTART_BASE_MS: '50', MEDIASOUP_RESTART_MAX_MS: '1000' }), logger, { stableAfterMs: 600 });
    try {
      const killAndWait = async (restarts: number) => {
        const { pid } = media.info().workers[0]!;
        process.kill(pid!, 'SIGKILL');
        await waitFor(`restart ${restarts}`, () => media.info().workers[0]!.restarts === restarts && media.aliveWorkerCount() === 1);
      };
      await killAndWait(1);
      await killAndWait(2);
      await killAndWait(3);
      await new Promise((resolve) => setTimeout(resolve, 700));
      await killAndWait(4);
      const delays = lines.filter((l) => l.msg === 'media worker restart scheduled').map((l) => l.delayMs);
      expect(delays).toEqual([50, 100, 200, 50]);
    } finally {
      await media.close();
    }
  });

  it('schedules the next attempt when a restart fails (its port is taken meanwhile)', async () => {
    const lines: { msg: string; delayMs?: number }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const config = mediaConfig({ MEDIASOUP_RESTART_BASE_MS: '300', MEDIASOUP_RESTART_MAX_MS: '2000' });
    const media = await createMedia(config, logger);
    const squatter = createSocket('udp4');
    try {
      process.kill(media.info().workers[0]!.pid!, 'SIGKILL');
      await waitFor('the death', () => lines.some((l) => l.msg === 'media worker restart scheduled'));
      await new Promise<void>((resolve, reject) => {
        squatter.once('error', reject);
        squatter.bind(config.rtcMinPort, '127.0.0.1', () => resolve());
      });
      await waitFor('a failed restart', () => lines.some((l) => l.msg === 'media worker restart failed'));
      expect(media.aliveWorkerCount()).toBe(0);
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
      await waitFor('the restart', () => media.aliveWorkerCount() === 1);
      const delays = lines.filter((l) => l.msg === 'media worker restart scheduled').map((l) => l.delayMs);
      expect(delays.slice(0, 2)).toEqual([300, 600]);
      expect(media.info().workers[0]).toMatchObject({ alive: true, restarts: 1, deaths: 1, port: config.rtcMinPort });
      const router = await media.createRouter({});
      expect(router.closed).toBe(false);
    } finally {
      await media.close();
    }
  });
});
