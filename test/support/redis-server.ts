// A private redis-server for the tests (its own port on 127.0.0.1, no persistence), started by the
// test and killed at the end; never the machine's Redis.
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { Redis } from 'ioredis';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class OwnRedis {
  private child: ChildProcess | undefined;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    this.child = child;
    const until = Date.now() + 10_000;
    while (!(await this.ping())) {
      if (Date.now() > until || child.exitCode !== null) throw new Error('redis-server did not start');
      await sleep(50);
    }
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }

  /** SIGSTOP / SIGCONT: a Redis that holds its connections but does not answer. */
  pause(paused: boolean): void {
    this.child?.kill(paused ? 'SIGSTOP' : 'SIGCONT');
  }

  /** One command on a connection of its own (`REPLICAOF`, `CONFIG SET`…): its reply, or the error Redis answered. */
  async command(name: string, ...args: (string | number)[]): Promise<unknown> {
    const client = new Redis(this.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    try {
      await client.connect();
      return await client.call(name, ...args.map(String)).catch((error: unknown) => error);
    } finally {
      client.disconnect();
    }
  }

  private ping(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = createConnection(this.port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
  }
}
