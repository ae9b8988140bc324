// `npm run demo` with one of its ports taken: it stops at once, naming the DEMO_* variable that sets
// that port (not the service's own PORT, which the demo does not read) and how to change it.
import { spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { childServerRtcPorts } from '../support/ports.js';
import { freePort, ROOT } from '../support/server-process.js';
import { scriptCommand } from './support.js';

const held: (Server | Socket)[] = [];
afterEach(() => {
  for (const handle of held.splice(0)) handle.close();
});

async function holdTcp(port: number): Promise<void> {
  const server = createServer();
  held.push(server);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
}

async function holdUdp(port: number): Promise<void> {
  const socket = createSocket('udp4');
  held.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, '127.0.0.1', () => resolve());
  });
}

/** `npm run demo`'s command, in the repository, with only PATH, HOME and `env`; resolves on its exit. */
function runDemo(env: Record<string, string>, timeoutMs = 90_000): Promise<{ code: number | null; output: string }> {
  const [, ...args] = scriptCommand('demo');
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  // The demo's service stops with it (exit-with-parent.ts), however it ends.
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

describe('npm run demo with a port taken', () => {
  it('DEMO_SERVICE_PORT taken: exits 1 naming DEMO_SERVICE_PORT and the port', { timeout: 120_000 }, async () => {
    const [demo, service] = [await freePort(), await freePort()];
    const rtc = childServerRtcPorts(9).min; // npm run demo takes it and the eight after it
    await holdTcp(service);
    const { code, output } = await runDemo({ DEMO_PORT: String(demo), DEMO_SERVICE_PORT: String(service), DEMO_RTC_PORT: String(rtc) });
    expect(code, output).toBe(1);
    expect(output).toContain(`DEMO_SERVICE_PORT: 127.0.0.1:${service} (TCP) cannot be used: already in use. Set DEMO_SERVICE_PORT to another port, or 0 for any free one`);
    expect(output).not.toMatch(/choose another with PORT/);
  });

  it('DEMO_PORT taken: exits 1 naming DEMO_PORT, before starting the service', { timeout: 120_000 }, async () => {
    const [demo, service] = [await freePort(), await freePort()];
    const rtc = childServerRtcPorts(9).min; // npm run demo takes it and the eight after it
    await holdTcp(demo);
    const { code, output } = await runDemo({ DEMO_PORT: String(demo), DEMO_SERVICE_PORT: String(service), DEMO_RTC_PORT: String(rtc) });
    expect(code, output).toBe(1);
    expect(output).toContain(`DEMO_PORT: 127.0.0.1:${demo} (TCP) cannot be used: already in use. Set DEMO_PORT to another port, or 0 for any free one`);
  });

  it('DEMO_RTC_PORT taken (UDP): exits 1 naming DEMO_RTC_PORT', { timeout: 120_000 }, async () => {
    const [demo, service] = [await freePort(), await freePort()];
    const rtc = childServerRtcPorts(9).min; // npm run demo takes it and the eight after it
    await holdUdp(rtc);
    const { code, output } = await runDemo({ DEMO_PORT: String(demo), DEMO_SERVICE_PORT: String(service), DEMO_RTC_PORT: String(rtc) });
    expect(code, output).toBe(1);
    expect(output).toContain(`DEMO_RTC_PORT: 127.0.0.1:${rtc} (UDP) cannot be used: already in use. Set DEMO_RTC_PORT to another port (UDP and TCP)`);
  });
});
