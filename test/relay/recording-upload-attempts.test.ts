// The recordings' uploader against storage that accepts and never answers (a real TCP server on
// 127.0.0.1) and against s3rver behind a front whose first connection hangs: each attempt ends at its
// deadline and closes its connection, the documented retries follow with their backoff, the upload
// rejects after the last, at most `concurrency` attempts hold a connection at once, a retry that
// reaches the storage succeeds, and a shutdown ends a hung attempt at once (UploadInterrupted).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createUploader, UploadInterrupted } from '../../src/relay/recordings/upload.js';
import { waitFor } from '../support/webrtc/wait.js';

const BUCKET = 'recordings';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** A TCP server on 127.0.0.1: `hang` connections are accepted and never answered, the others piped to `forward`. */
async function front(options: { hang: (index: number) => boolean; forward?: number }) {
  const open = new Set<Socket>();
  let connections = 0;
  let maxOpen = 0;
  const server: Server = createServer((socket) => {
    const index = connections++;
    open.add(socket);
    maxOpen = Math.max(maxOpen, open.size);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => {});
    // A hung connection reads what comes and never answers (reading, it sees the client close it).
    if (options.hang(index) || options.forward === undefined) return void socket.resume();
    const upstream = createConnection({ host: '127.0.0.1', port: options.forward });
    upstream.on('error', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    connections: () => connections,
    maxOpen: () => maxOpen,
    open: () => open.size,
    close: () => {
      for (const socket of open) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A logger whose lines the test reads. */
function collectingLogger() {
  const lines: { msg: string; [key: string]: unknown }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.startsWith('{')) lines.push(JSON.parse(line) as (typeof lines)[number]);
      done();
    },
  });
  return { logger: createLogger({ level: 'info', destination }), lines };
}

/** Settles within `ms` or says it did not. */
function within<T>(promise: Promise<T>, ms: number): Promise<{ value?: T; error?: unknown; pending?: true }> {
  return Promise.race([
    promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    new Promise<{ pending: true }>((resolve) => setTimeout(() => resolve({ pending: true }), ms)),
  ]);
}

describe('recording uploads: attempt deadline, retries, concurrency (real TCP, s3rver)', () => {
  let dir: string;
  let store: string;
  let s3: S3rver;
  let s3Port: number;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'upload-attempts-'));
    store = mkdtempSync(path.join(tmpdir(), 's3rver-attempts-'));
    s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: store, configureBuckets: [{ name: BUCKET, configs: [] }] });
    s3Port = (await s3.run()).port;
    vi.stubEnv('AWS_ACCESS_KEY_ID', CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', CREDENTIALS.secretAccessKey);
  });

  afterAll(async () => {
    await s3?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(store, { recursive: true, force: true });
    vi.unstubAllEnvs();
  });

  function files(count: number, prefix: string): string[] {
    return Array.from({ length: count }, (_, i) => {
      const file = path.join(dir, `${prefix}-${i}.ogg`);
      writeFileSync(file, Buffer.alloc(20_000, i));
      return file;
    });
  }

  it('a hung storage: each attempt ends at its deadline, retried with backoff, rejected after the last; at most `concurrency` connections; none left', { timeout: 60_000 }, async () => {
    const hung = await front({ hang: () => true });
    const { logger, lines } = collectingLogger();
    const uploader = createUploader({ bucket: BUCKET, endpoint: hung.url, region: 'us-east-1', keepLocal: true }, logger, {
      attempts: 3,
      attemptTimeoutMs: 500,
      backoffMs: 50,
      maxBackoffMs: 100,
      concurrency: 2,
    });
    try {
      const started = performance.now();
      const outcomes = await Promise.all(files(5, 'hung').map((file) => within(uploader.upload(file, path.basename(file), 'audio/ogg'), 30_000)));
      const tookMs = performance.now() - started;
      for (const outcome of outcomes) {
        expect(outcome.pending).toBeUndefined();
        expect(String(outcome.error)).toMatch(/failed after 3 attempts: no answer within/);
      }
      // 5 uploads × 3 attempts, 2 at a time, each about 0.5 s plus its 1 s per MiB (none here).
      expect(hung.connections()).toBe(15);
      expect(hung.maxOpen()).toBeLessThanOrEqual(2);
      expect(tookMs).toBeGreaterThan(3000);
      expect(lines.filter((l) => l.msg === 'recording upload failed; retrying').map((l) => l.retryInMs)).toEqual(expect.arrayContaining([50, 100]));
      await waitFor(() => hung.open() === 0, { timeoutMs: 2000, what: 'every connection of a given-up attempt closed' });
    } finally {
      uploader.close();
      await hung.close();
    }
  });

  it('the retry after a hung attempt reaches the storage: uploaded, the object is the file', { timeout: 60_000 }, async () => {
    const flaky = await front({ hang: (index) => index === 0, forward: s3Port });
    const { logger, lines } = collectingLogger();
    const uploader = createUploader({ bucket: BUCKET, endpoint: flaky.url, region: 'us-east-1', keepLocal: true }, logger, { attempts: 3, attemptTimeoutMs: 1000, backoffMs: 50 });
    const [file] = files(1, 'retried');
    try {
      const outcome = await within(uploader.upload(file!, 'retried.ogg', 'audio/ogg'), 30_000);
      expect(outcome).toEqual({ value: 20_000 });
      expect(lines.filter((l) => l.msg === 'recording upload failed; retrying')).toMatchObject([{ attempt: 1, reason: expect.stringMatching(/^no answer within 10\d\d ms$/) }]);
      const client = new S3Client({ endpoint: `http://127.0.0.1:${s3Port}`, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS });
      try {
        const object = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'retried.ogg' }));
        expect(Buffer.from(await object.Body!.transformToByteArray()).equals(readFileSync(file!))).toBe(true);
      } finally {
        client.destroy();
      }
    } finally {
      uploader.close();
      await flaky.close();
    }
  });

  it('close() (shutdown) ends a hung attempt and the uploads waiting their turn at once: UploadInterrupted, no connection left', { timeout: 30_000 }, async () => {
    const hung = await front({ hang: () => true });
    const { logger } = collectingLogger();
    const uploader = createUploader({ bucket: BUCKET, endpoint: hung.url, region: 'us-east-1', keepLocal: true }, logger, { attemptTimeoutMs: 60_000, concurrency: 1 });
    try {
      const uploads = files(2, 'closed').map((file) => within(uploader.upload(file, path.basename(file), 'audio/ogg'), 5000));
      await waitFor(() => hung.open() === 1, { timeoutMs: 5000, what: 'the first attempt connected' });
      uploader.close();
      for (const outcome of await Promise.all(uploads)) expect(outcome.error).toBeInstanceOf(UploadInterrupted);
      await waitFor(() => hung.open() === 0, { timeoutMs: 2000, what: 'the hung connection closed' });
      expect(hung.connections()).toBe(1);
    } finally {
      await hung.close();
    }
  });
});
