// A finished recording's upload to S3-compatible storage (Tigris on Fly.io, AWS S3, MinIO) with the
// AWS SDK: multipart through @aws-sdk/lib-storage's Upload, checksums only where S3 requires them
// (some S3-compatible servers would otherwise store the streamed `aws-chunked` framing with the
// bytes), retried with a doubling backoff, confirmed by the object's size before the local file goes.
// Each attempt has a deadline (a storage that accepts and never answers costs one attempt, not the
// upload) and its own client, destroyed with the attempt, so a given-up attempt holds no connection;
// at most `concurrency` attempts run at once, the others wait their turn.
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../logger.js';

export type S3Settings = NonNullable<Config['recordings']['s3']>;

export interface UploaderOptions {
  /** First retry delay; doubles per attempt up to `maxBackoffMs` (default 1 s). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Attempts in all before the upload is given up (default 8: about 4 minutes of retries). */
  attempts?: number;
  /** An attempt's deadline: this (default 30 s) plus 1 s per MiB of the file (a throughput under 1 MiB/s). */
  attemptTimeoutMs?: number;
  /** Attempts under way at once (default UPLOAD_CONCURRENCY). */
  concurrency?: number;
}

/** Uploads under way at once: the rest wait, holding neither a connection nor a file descriptor. */
export const UPLOAD_CONCURRENCY = 4;
export const UPLOAD_ATTEMPTS = 8;
export const UPLOAD_ATTEMPT_TIMEOUT_MS = 30_000;

/** The upload was cut short by the relay's shutdown: not a failure, the next start resumes it. */
export class UploadInterrupted extends Error {
  constructor() {
    super('the relay is shutting down');
    this.name = 'UploadInterrupted';
  }
}

export interface Uploader {
  /** Uploads `file` under `key`; resolves with the bytes stored, rejects after the last attempt (UploadInterrupted on close()). */
  upload(file: string, key: string, contentType: string): Promise<number>;
  /** Cancels the uploads under way (shutdown): their attempts end, their connections close, they reject with UploadInterrupted. */
  close(): void;
}

interface Sdk {
  S3Client: typeof import('@aws-sdk/client-s3').S3Client;
  HeadObjectCommand: typeof import('@aws-sdk/client-s3').HeadObjectCommand;
  Upload: typeof import('@aws-sdk/lib-storage').Upload;
}

/** Multipart parts: S3's minimum (5 MiB), so that a recording of any length goes up in bounded memory. */
const PART_SIZE = 5 * 1024 * 1024;

export function createUploader(settings: S3Settings, logger: Logger, options: UploaderOptions = {}): Uploader {
  // The SDK is loaded on the first upload (a dynamic import, as Node documents it): it is large, and a
  // relay without RECORDINGS_S3_BUCKET, or one that never finishes a recording, never needs it.
  let sdk: Promise<Sdk> | undefined;
  const load = () =>
    (sdk ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]).then(([s3, storage]) => ({
      S3Client: s3.S3Client,
      HeadObjectCommand: s3.HeadObjectCommand,
      Upload: storage.Upload,
    })));
  const backoffMs = options.backoffMs ?? 1000;
  const maxBackoffMs = options.maxBackoffMs ?? 60_000;
  const attempts = options.attempts ?? UPLOAD_ATTEMPTS;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? UPLOAD_ATTEMPT_TIMEOUT_MS;
  const concurrency = options.concurrency ?? UPLOAD_CONCURRENCY;
  /** Everything a close() must end: backoff waits, turns waited for, attempts under way. */
  const cancels = new Set<() => void>();
  let running = 0;
  const turns: (() => void)[] = [];
  let closed = false;

  /** Resolves when an attempt may run (at most `concurrency` at once); rejects on close(). */
  function turn(): Promise<void> {
    if (closed) return Promise.reject(new UploadInterrupted());
    if (running < concurrency) {
      running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        cancels.delete(cancel);
        running++;
        resolve();
      };
      const cancel = () => {
        const index = turns.indexOf(go);
        if (index >= 0) turns.splice(index, 1);
        reject(new UploadInterrupted());
      };
      turns.push(go);
      cancels.add(cancel);
    });
  }

  function done(): void {
    running--;
    turns.shift()?.();
  }

  async function once(file: string, key: string, contentType: string): Promise<number> {
    const { S3Client, HeadObjectCommand, Upload } = await load();
    const { size } = await stat(file);
    // The attempt's own agents: destroying them ends its sockets, whatever its requests are doing.
    const agents = { httpAgent: new HttpAgent({ keepAlive: true }), httpsAgent: new HttpsAgent({ keepAlive: true }) };
    const client: S3Client = new S3Client({
      region: settings.region,
      requestHandler: agents,
      ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // The relay's own retries below: the SDK's are for a request, these for the whole upload.
      maxAttempts: 1,
    });
    const body = createReadStream(file);
    const abort = new AbortController();
    const deadlineMs = attemptTimeoutMs + Math.ceil((size * 1000) / (1024 * 1024));
    let why: Error | undefined;
    const end = (reason: Error) => {
      why ??= reason;
      abort.abort(reason);
      // Closing the sockets ends a request still waiting for an answer now.
      agents.httpAgent.destroy();
      agents.httpsAgent.destroy();
      client.destroy();
    };
    const timer = setTimeout(() => end(new Error(`no answer within ${deadlineMs} ms`)), deadlineMs);
    const cancel = () => end(new UploadInterrupted());
    cancels.add(cancel);
    try {
      const upload = new Upload({ client, params: { Bucket: settings.bucket, Key: key, Body: body, ContentType: contentType }, partSize: PART_SIZE, queueSize: 2, abortController: abort });
      await upload.done();
      const head = await client.send(new HeadObjectCommand({ Bucket: settings.bucket, Key: key }), { abortSignal: abort.signal });
      if (head.ContentLength !== size) throw new Error(`the stored object has ${head.ContentLength} bytes, the file ${size}`);
      return size;
    } catch (error) {
      // The abort's own error says only "aborted": the reason is ours.
      throw why ?? error;
    } finally {
      clearTimeout(timer);
      cancels.delete(cancel);
      body.destroy();
      client.destroy();
      agents.httpAgent.destroy();
      agents.httpsAgent.destroy();
    }
  }

  function wait(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const cancel = () => {
        clearTimeout(timer);
        reject(new UploadInterrupted());
      };
      const timer = setTimeout(() => {
        cancels.delete(cancel);
        resolve();
      }, ms);
      cancels.add(cancel);
    });
  }

  return {
    async upload(file, key, contentType) {
      let delay = backoffMs;
      for (let attempt = 1; ; attempt++) {
        await turn();
        try {
          const bytes = await once(file, key, contentType);
          if (!settings.keepLocal) await rm(file, { force: true });
          return bytes;
        } catch (error) {
          if (closed || error instanceof UploadInterrupted) throw new UploadInterrupted();
          const reason = error instanceof Error ? error.message : String(error);
          if (attempt >= attempts) throw new Error(`upload of ${key} failed after ${attempt} attempts: ${reason}`, { cause: error });
          logger.warn({ key, attempt, retryInMs: delay, reason }, 'recording upload failed; retrying');
        } finally {
          done();
        }
        await wait(delay);
        delay = Math.min(maxBackoffMs, delay * 2);
      }
    },
    close() {
      closed = true;
      for (const cancel of [...cancels]) cancel();
      cancels.clear();
    },
  };
}
