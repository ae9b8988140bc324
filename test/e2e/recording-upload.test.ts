// A finished recording uploaded to S3-compatible storage: a local s3rver (an npm package of one, no
// mock of the SDK) started by the test, stopped while the upload begins and started again on the same
// port and directory: the upload is retried, then the object's bytes equal the file's and the local
// file is gone (RECORDINGS_KEEP_LOCAL unset).
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRelayClient } from '../../src/client/relay-client.js';
import type { RelayEvent } from '../../src/relay/contract/events.js';
import { allocateRtcPorts, buildTestApp, type TestApp } from '../support/app.js';
import { FFMPEG, skipWithout } from '../support/system-programs.js';
import { SendPeer } from '../support/webrtc/peer.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';

const BUCKET = 'recordings';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

describe.skipIf(skipWithout(FFMPEG))('recording upload to S3-compatible storage (s3rver)', () => {
  let t: TestApp;
  let dir: string;
  let store: string;
  let server: S3rver | undefined;
  let port = 0;
  const events: (RelayEvent & Record<string, any>)[] = [];

  async function startServer(): Promise<void> {
    server = new S3rver({ port, address: '127.0.0.1', silent: true, directory: store, configureBuckets: [{ name: BUCKET, configs: [] }] });
    port = (await server.run()).port;
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'recordings-'));
    store = mkdtempSync(path.join(tmpdir(), 's3rver-'));
    await startServer();
    // The SDK's standard credential variables (read by the SDK itself, as in production).
    vi.stubEnv('AWS_ACCESS_KEY_ID', CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', CREDENTIALS.secretAccessKey);
    const ports = allocateRtcPorts(3);
    t = await buildTestApp(
      {
        RTC_MIN_PORT: String(ports.min),
        RTC_MAX_PORT: String(ports.max),
        RECORDINGS_DIR: dir,
        RECORDINGS_MIN_FREE_MB: '1',
        RECORDINGS_S3_BUCKET: BUCKET,
        RECORDINGS_S3_ENDPOINT: `http://127.0.0.1:${port}`,
        RECORDINGS_S3_REGION: 'us-east-1',
      },
      { areas: { accounts: false } },
    );
    t.events.bus.listen((event) => void events.push(event as never));
  }, 90_000);

  afterAll(async () => {
    await t?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(store, { recursive: true, force: true });
    // The bulk's workers run file after file (isolate: false): the variables go back to what they were.
    vi.unstubAllEnvs();
  }, 60_000);

  it('retries while the server is down, then uploads; the object is the file, the local copy removed', { timeout: 90_000 }, async () => {
    const relay = createRelayClient({ baseUrl: 'http://relay.test', token: t.internalToken, fetch: t.app.request });
    const router = await relay.createRouter({});
    const transport = await relay.createTransport({ routerId: router.id, direction: 'send' });
    const sender = await SendPeer.create(transport);
    try {
      await relay.connectTransport(transport.id, sender.dtlsParameters);
      await sender.connected();
      const audio = await relay.createProducer({ transportId: transport.id, kind: 'audio', rtpParameters: sender.rtpParameters.audio });
      sender.start();
      const recording = await relay.createRecording({ routerId: router.id, producerIds: [audio.id], appData: { meeting: 'up' } });
      await sleep(2000);

      // The storage goes away just as the upload starts.
      await server!.close();
      server = undefined;
      const stopped = await relay.stopRecording(recording.id);
      expect(stopped).toMatchObject({ state: 'stopped', upload: 'pending' });
      const file = path.join(dir, stopped.file);
      const copy = `${file}.copy`;
      copyFileSync(file, copy);
      await sleep(1500);
      expect(events.some((e) => e.type === 'recording.uploaded')).toBe(false);
      await startServer();

      await waitFor(() => events.some((e) => e.recordingId === recording.id && (e.type === 'recording.uploaded' || e.type === 'recording.failed')), {
        timeoutMs: 30_000,
        what: 'recording.uploaded',
      });
      const uploaded = events.find((e) => e.recordingId === recording.id && e.type === 'recording.uploaded');
      expect(uploaded).toMatchObject({ key: stopped.file, bytes: stopped.bytes, appData: { meeting: 'up' } });
      expect(await relay.getRecording(recording.id)).toMatchObject({ upload: 'uploaded', key: stopped.file });

      const s3 = new S3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS });
      try {
        const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: stopped.file }));
        const bytes = Buffer.from(await object.Body!.transformToByteArray());
        expect(bytes.equals(readFileSync(copy))).toBe(true);
      } finally {
        s3.destroy();
      }
      expect(existsSync(file)).toBe(false);
    } finally {
      await sender.close();
      await relay.closeRouter(router.id).catch(() => {});
    }
  });
});
