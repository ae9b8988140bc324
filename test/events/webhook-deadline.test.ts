// Issue 32 #1: a webhook attempt against a receiver that takes the POST and never answers must fail at
// its deadline even while major GCs run (an AbortSignal.any() deadline is lost after a GC:
// nodejs/node#57736), so that delivery goes on once the receiver recovers. The sink runs in a child
// process with --expose-gc calling gc() all along, on the running Node and on Node 22.
import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { webhookBatchSchema } from '../../src/relay/contract/events.js';
import { ROOT } from '../support/server-process.js';
import { requireNode22 } from '../support/node22.js';
import type { ChildMessage } from './fixtures/webhook-sink-child.js';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'webhook-sink-child.ts');
/** The attempt's deadline in the child; the hung attempts must fail about this long after they start. */
const TIMEOUT_MS = 800;

type Stats = Extract<ChildMessage, { type: 'stats' }>['stats'];

/** A receiver on 127.0.0.1 that reads each POST and, while `hang` is set, never answers it. */
async function hangingReceiver() {
  const open = new Set<ServerResponse>();
  const state = { hang: true, hung: 0, accepted: [] as string[][] };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (state.hang) {
        state.hung++;
        open.add(res);
        res.on('close', () => open.delete(res));
        return;
      }
      state.accepted.push(webhookBatchSchema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8'))).events.map((e) => e.id));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    state,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The sink's child process on `node`: its last stats, what it published, and a bounded wait on both. */
function startChild(node: string, url: string) {
  const child: ChildProcess = fork(FIXTURE, [], {
    cwd: ROOT,
    execPath: node,
    execArgv: ['--expose-gc', '--import', 'tsx'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', WEBHOOK_URL: url, TIMEOUT_MS: String(TIMEOUT_MS) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-8192)));
  child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-8192)));
  const seen = { version: '', stats: undefined as Stats | undefined, gcs: 0, published: [] as string[][] };
  child.on('message', (m: ChildMessage) => {
    if (m.type === 'ready') seen.version = m.node;
    else if (m.type === 'published') seen.published.push(m.ids);
    else {
      seen.stats = m.stats;
      seen.gcs = m.gcs;
    }
  });
  const until = async (check: () => boolean, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (child.exitCode !== null) throw new Error(`the sink's process exited (${child.exitCode}) before ${what}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; sink stats ${JSON.stringify(seen.stats)}, ${seen.gcs} gc() calls`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    seen,
    until,
    async publish(n: number): Promise<string[]> {
      const before = seen.published.length;
      child.send({ publish: n });
      await until(() => seen.published.length > before, 5000, 'the events to be published');
      return seen.published[before]!;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    },
  };
}

async function hungReceiverThenRecovery(node: string, expectedMajor?: number) {
  const receiver = await hangingReceiver();
  const child = startChild(node, receiver.url);
  try {
    await child.until(() => child.seen.version !== '' && child.seen.stats !== undefined, 15_000, 'the sink process to start');
    if (expectedMajor !== undefined) expect(child.seen.version).toMatch(new RegExp(`^v${expectedMajor}\\.`));
    const first = await child.publish(3);
    await child.until(() => receiver.state.hung >= 1, 5000, 'the first POST to reach the receiver');
    const gcsAtHang = child.seen.gcs;
    // The attempt hangs while the heap churns: it must fail at its deadline and be retried (and fail
    // again). Before the fix the first attempt stayed pending for ever: failures stayed 0.
    await child.until(() => (child.seen.stats?.failures ?? 0) >= 2, 6 * TIMEOUT_MS, 'the hung attempts to be counted as failed');
    expect(child.seen.gcs - gcsAtHang).toBeGreaterThan(10); // gc() did run during the hang
    expect(receiver.state.hung).toBeGreaterThanOrEqual(2); // each failure was followed by a retry
    const meanwhile = await child.publish(4);
    expect(child.seen.stats!.delivered).toBe(0);

    receiver.state.hang = false; // the receiver recovers
    await child.until(() => child.seen.stats?.delivered === 7, 10_000, 'the queued events to be delivered after the receiver recovered');
    expect(receiver.state.accepted.flat()).toEqual([...first, ...meanwhile]);
    expect(child.seen.stats).toMatchObject({ queued: 0, dropped: 0, delivered: 7 });
    expect(child.seen.stats!.failures).toBeGreaterThanOrEqual(2);
  } finally {
    await child.kill();
    await receiver.close();
  }
}

describe('event webhook against a receiver that never answers, while major GCs run', () => {
  it(`fails the hung attempt at its deadline and delivers after recovery, on the running Node (${process.version})`, async () => {
    await hungReceiverThenRecovery(process.execPath);
  });

  it('fails the hung attempt at its deadline and delivers after recovery, on Node 22', async (ctx) => {
    const node = requireNode22(ctx);
    await hungReceiverThenRecovery(node, 22);
  });
});
