// A finished recording's upload to S3-compatible storage (Tigris on Fly.io, AWS S3, MinIO) with the
// AWS SDK: multipart through @aws-sdk/lib-storage's Upload, checksums only where S3 requires them
// (some S3-compatible servers would otherwise store the streamed `aws-chunked` framing with the
// bytes), retried with a doubling backoff, confirmed by the object's size before the local file goes.
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
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
}

export interface Uploader {
  /** Uploads `file` under `key`; resolves with the bytes stored, rejects after the last attempt. */
  upload(file: string, key: string, contentType: string): Promise<number>;
  /** Cancels the retries under way (shutdown); their uploads reject. */
  close(): void;
}

interface Sdk {
  client: S3Client;
  HeadObjectCommand: typeof import('@aws-sdk/client-s3').HeadObjectCommand;
  Upload: typeof import('@aws-sdk/lib-storage').Upload;
}

/** Multipart parts: S3's minimum (5 MiB), so that a recording of any length goes up in bounded memory. */
const PART_SIZE = 5 * 1024 * 1024;

export function createUploader(settings: S3Settings, logger: Logger, options: UploaderOptions = {}): Uploader {
  // The SDK is loaded on the first upload (a dynamic import, as Node documents it): it is large, and a
  // relay without RECORDINGS_S3_BUCKET, or one that never finishes a recording, never needs it.
  let sdk: Promise<Sdk> | undefined;
  let loaded: S3Client | undefined;
  const load = () =>
    (sdk ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]).then(([s3, storage]) => {
      loaded = new s3.S3Client({
        region: settings.region,
        ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        // The relay's own retries below: the SDK's are for a request, these for the whole upload.
        maxAttempts: 1,
      });
      return { client: loaded, HeadObjectCommand: s3.HeadObjectCommand, Upload: storage.Upload };
    }));
  const backoffMs = options.backoffMs ?? 1000;
  const maxBackoffMs = options.maxBackoffMs ?? 60_000;
  const attempts = options.attempts ?? 8;
  const timers = new Set<{ timer: NodeJS.Timeout; reject: (error: Error) => void }>();
  let closed = false;

  async function once(file: string, key: string, contentType: string): Promise<number> {
    const { client, HeadObjectCommand, Upload } = await load();
    const { size } = await stat(file);
    const body = createReadStream(file);
    try {
      await new Upload({ client, params: { Bucket: settings.bucket, Key: key, Body: body, ContentType: contentType }, partSize: PART_SIZE, queueSize: 2 }).done();
    } finally {
      body.destroy();
    }
    const head = await client.send(new HeadObjectCommand({ Bucket: settings.bucket, Key: key }));
    if (head.ContentLength !== size) throw new Error(`the stored object has ${head.ContentLength} bytes, the file ${size}`);
    return size;
  }

  function wait(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const entry = {
        timer: setTimeout(() => {
          timers.delete(entry);
          resolve();
        }, ms),
        reject,
      };
      timers.add(entry);
    });
  }

  return {
    async upload(file, key, contentType) {
      let delay = backoffMs;
      for (let attempt = 1; ; attempt++) {
        try {
          const bytes = await once(file, key, contentType);
          if (!settings.keepLocal) await rm(file, { force: true });
          return bytes;
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          if (closed || attempt >= attempts) throw new Error(`upload of ${key} failed after ${attempt} attempts: ${reason}`, { cause: error });
          logger.warn({ key, attempt, retryInMs: delay, reason }, 'recording upload failed; retrying');
          await wait(delay);
          delay = Math.min(maxBackoffMs, delay * 2);
        }
      }
    },
    close() {
      closed = true;
      for (const entry of timers) {
        clearTimeout(entry.timer);
        entry.reject(new Error('the relay is shutting down'));
      }
      timers.clear();
      loaded?.destroy();
    },
  };
}
