// `npm run test:image`: builds the production image with podman and runs it the way Fly.io does: the
// release_command of fly.toml (migrations) against a fresh PostgreSQL database, then the service with
// fly.toml's environment, NODE_ENV=production, a real INTERNAL_TOKEN and AUTH_KEY_SECRET; then checks it from the host
// (readiness, the account API, the relay API and real media through it, a short recording made by the
// container's ffmpeg, the user it runs as, a graceful SIGTERM) and prints the image size, start-up time
// and idle memory.
//
// Docker's engine does not run on these machines: podman with runc does (crun refuses the cgroup
// layout here), from a base image assembled by test/image/base.sh, which is kept between runs.
// Everything else it starts (the container, the images it built, the database) is removed at the
// end, also on failure or Ctrl-C. Options: --image NAME runs the checks on an existing image (not
// built, not removed); --keep-logs keeps the build log and container log. IMAGE_NODE_BIN: build on
// a base with that Node.js binary instead of this process's own (see base.sh).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { inspect } from 'node:util';
import postgres from 'postgres';
import { parse as parseToml } from 'smol-toml';
import { createRelayClient } from '../../src/client/relay-client.js';
import { decodeCheckArgs, ffprobeArgs, ingestRtpParameters, parseProbe, testSourceArgs, withoutMuxerComplaints } from '../support/ffmpeg.js';
import { freePort, ROOT } from '../support/server-process.js';
import { openCall } from '../support/webrtc/call.js';
import { sleep, waitFor } from '../support/webrtc/wait.js';

/** Every podman call: runc, and the limits this machine allows (the defaults cannot be raised here). */
const PODMAN = ['--runtime', 'runc'];
const LIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=4096:4096'];
const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const READY_TIMEOUT_MS = 60_000;
/**
 * How long the recording check records (ms), and the shortest file it accepts (s): the file holds the
 * media the source really sent, and the container's -re source falls behind on a loaded machine (1 s
 * in 2 s here at load 17); recording.test checks durations against the wall clock.
 */
const RECORD_MS = 2000;
const RECORDED_MIN_S = 0.5;
/** Packets the receiver must get after resume: 1 s of audio (20 ms) and of video (30 frames/s). */
const FLOWING = { audio: 50, video: 30 };

const args = process.argv.slice(2);
const givenImage = args.includes('--image') ? args[args.indexOf('--image') + 1] : undefined;
const keepLogs = args.includes('--keep-logs');
const runId = randomBytes(4).toString('hex');
const workDir = mkdtempSync(path.join(tmpdir(), 'chat-backend-image-'));
const fly = parseToml(readFileSync(path.join(ROOT, 'fly.toml'), 'utf8')) as {
  app: string;
  kill_timeout: string;
  deploy: { release_command: string };
  env: Record<string, string>;
};
const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };

// ---- checks and their summary ----

const PLANNED = [
  'base image',
  'image builds',
  'runtime image is minimal',
  'release_command applies the migrations',
  'service ready',
  'account API: register, login, profile',
  'relay API only on the internal listener',
  'media flows through the relay',
  'a recording inside the container',
  'runs as uid 1000 under tini',
  'SIGTERM drains and exits 0',
] as const;
type CheckName = (typeof PLANNED)[number];
const results = new Map<CheckName, { ok: boolean; detail: string }>();

/** Runs one check; a `required` check that fails stops the run (the checks after it count as failed). */
async function check(name: CheckName, fn: () => Promise<string | void>, required = false): Promise<void> {
  if (interrupted) throw new StopRun(name);
  const started = performance.now();
  try {
    const detail = (await fn()) ?? '';
    // A signal may have come during the await (TypeScript's narrowing above does not know it).
    if (interrupted) throw new Error(`interrupted by ${interrupted as NodeJS.Signals}`);
    const took = ((performance.now() - started) / 1000).toFixed(1);
    results.set(name, { ok: true, detail });
    console.log(`  ok    ${name} (${took} s)${detail ? `: ${detail}` : ''}`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    results.set(name, { ok: false, detail: message });
    console.log(`  FAIL  ${name}: ${message}`);
    if (required) throw new StopRun(name);
  }
}

class StopRun extends Error {}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

// ---- processes ----

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, argv: string[], options: { timeoutMs?: number; allowFailure?: boolean } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    execFile(command, argv, { cwd: ROOT, timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      if (code !== 0 && !options.allowFailure) {
        reject(new Error(`${command} ${argv.slice(0, 4).join(' ')} … exited ${code}: ${(stderr || stdout).trim().slice(-1500)}`));
      } else {
        resolve({ code, stdout, stderr });
      }
    });
  });
}

const podman = (argv: string[], options?: { timeoutMs?: number; allowFailure?: boolean }) => run('podman', [...PODMAN, ...argv], options);

/** Long commands still running (the build), ended by cleanup() when the run is interrupted. */
const longRunning = new Set<ChildProcess>();

/** A long command with its output in a log file; the log's tail in the error when it fails. */
function runLogged(command: string, argv: string[], logFile: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const log = createWriteStream(logFile);
    const child = spawn(command, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    longRunning.add(child);
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      longRunning.delete(child);
      clearTimeout(timer);
      log.end(() => {
        if (code === 0) return resolve();
        const tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-25).join('\n');
        reject(new Error(`${command} ${argv[0] ?? ''} ${argv[1] ?? ''} ended with ${signal ?? `exit ${code}`}; last lines of ${logFile}:\n${tail}`));
      });
    });
  });
}

// ---- what this run creates, removed in cleanup() ----

// Each is recorded before the command that creates it, so that an interruption at any point still
// removes it (removing what does not exist yet is harmless).
const created = {
  /** Image ids present before the build: every other id found at cleanup came from this run's build. */
  imagesBefore: undefined as Set<string> | undefined,
  /** Likewise for build containers (buildah's, listed with --external), left when a build is cut short. */
  buildContainersBefore: undefined as Set<string> | undefined,
  image: undefined as string | undefined,
  container: undefined as string | undefined,
  database: undefined as string | undefined,
};
const peers: { close(): Promise<void> }[] = [];

async function imageIds(): Promise<Set<string>> {
  const { stdout } = await podman(['images', '--all', '--quiet', '--no-trunc']);
  return new Set(stdout.split('\n').map((s) => s.trim()).filter(Boolean));
}

async function buildContainerIds(): Promise<Set<string>> {
  const { stdout } = await podman(['ps', '--all', '--external', '--quiet', '--no-trunc']);
  return new Set(stdout.split('\n').map((s) => s.trim()).filter(Boolean));
}

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const peer of peers) await peer.close().catch(() => {});
    for (const child of longRunning) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('close', resolve));
    }
    if (created.container) {
      if (keepLogs) {
        const logs = await podman(['logs', created.container], { allowFailure: true });
        writeFileSync(path.join(workDir, 'container.log'), logs.stdout + logs.stderr);
      }
      await podman(['rm', '--force', '--time', '0', created.container], { allowFailure: true });
    }
    if (created.buildContainersBefore) {
      const before = created.buildContainersBefore;
      for (const id of [...(await buildContainerIds())].filter((id) => !before.has(id))) {
        await podman(['rm', '--force', id], { allowFailure: true });
      }
    }
    if (created.imagesBefore) {
      // The tagged image first, then the stage images the build left.
      if (created.image) await podman(['rmi', '--force', created.image], { allowFailure: true });
      const before = created.imagesBefore;
      for (const id of [...(await imageIds())].filter((id) => !before.has(id))) {
        await podman(['rmi', '--force', id], { allowFailure: true });
      }
    }
    if (created.database) {
      const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists "${created.database}" with (force)`).catch((error: unknown) => {
        console.log(`  (could not drop database ${created.database}: ${String(error)})`);
      });
      await admin.end({ timeout: 2 });
    }
    if (keepLogs) console.log(`logs kept in ${workDir}`);
    else rmSync(workDir, { recursive: true, force: true });
  })();
  return cleaning;
}

let interrupted: NodeJS.Signals | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = signal;
    console.log(`\n${signal}: removing what this run created`);
    void cleanup().finally(() => {
      printSummary();
      process.exit(1);
    });
  });
}

// ---- the run ----

async function main(): Promise<void> {
  const nodeBin = process.env.IMAGE_NODE_BIN ?? process.execPath;
  const nodeMajor = (await run(nodeBin, ['-p', 'process.versions.node.split(".")[0]'])).stdout.trim();
  let image = givenImage ?? '';

  await check(
    'base image',
    async () => {
      if (givenImage) return `skipped: --image ${givenImage}`;
      const started = performance.now();
      const { stdout, stderr } = await run('bash', [path.join(ROOT, 'test/image/base.sh')], { timeoutMs: 15 * 60_000 });
      const assembled = /debootstrap/.test(stderr);
      return `${stdout.trim()}, ${assembled ? `assembled in ${((performance.now() - started) / 1000).toFixed(0)} s` : 'cached'}`;
    },
    true,
  );

  await check(
    'image builds',
    async () => {
      if (givenImage) return `skipped: --image ${givenImage}`;
      image = `localhost/chat-backend-image-test:${runId}`;
      created.imagesBefore = await imageIds();
      created.buildContainersBefore = await buildContainerIds();
      created.image = image;
      await runLogged(
        'podman',
        [...PODMAN, 'build', '--pull=never', '--network', 'host', ...LIMITS, '--build-arg', `NODE_VERSION=${nodeMajor}`, '--tag', image, '.'],
        path.join(workDir, 'build.log'),
        20 * 60_000,
      );
      return `${image}, NODE_VERSION=${nodeMajor}`;
    },
    true,
  );

  await check('runtime image is minimal', async () => {
    // Dev-only packages per the lockfile (npm ci --omit=dev leaves them out); tools that must be absent.
    const devOnly = Object.entries(lock.packages)
      .filter(([key, meta]) => meta.dev && /^node_modules\/(@[^/]+\/)?[^/]+$/.test(key))
      .map(([key]) => key.slice('node_modules/'.length));
    const script = [
      'ls -A /app',
      'echo ---',
      'for t in gcc cc g++ make python3 tsc tsx; do command -v "$t" || true; done',
      'echo ---',
      'id -u',
      'echo ---',
      'cd /app && for p in "$@"; do [ -e "node_modules/$p" ] && echo "$p"; done; true',
    ].join('\n');
    const { stdout } = await podman(['run', '--pull=never', '--rm', '--network', 'none', ...LIMITS, '--entrypoint', '/bin/sh', image, '-c', script, 'sh', ...devOnly]);
    const [appEntries = '', tools = '', uid = '', devFound = ''] = stdout.split('---\n').map((s) => s.trim());
    const entries = appEntries.split('\n').sort();
    assert(
      JSON.stringify(entries) === JSON.stringify(['dist', 'drizzle', 'node_modules', 'package-lock.json', 'package.json']),
      `/app holds ${entries.join(', ')} (expected dist, drizzle, node_modules, package.json, package-lock.json only)`,
    );
    assert(tools === '', `build tools in the image: ${tools.replace(/\n/g, ', ')}`);
    assert(uid === '1000', `default user has uid ${uid}, not 1000`);
    assert(devFound === '', `dev dependencies in the image: ${devFound.replace(/\n/g, ', ')}`);
    assert(devOnly.includes('typescript'), 'the lockfile marks no dev-only packages');
    return `/app = ${entries.join(' ')}; no compiler, no test files, none of ${devOnly.length} dev-only packages`;
  });

  // A fresh database, as a new Fly app would have.
  const databaseName = `chat_image_${runId}`;
  const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    created.database = databaseName;
    await admin.unsafe(`create database "${databaseName}"`);
  } finally {
    await admin.end({ timeout: 2 });
  }
  const databaseUrl = new URL(ADMIN_DATABASE_URL);
  databaseUrl.pathname = `/${databaseName}`;

  // fly.toml's [env], with what exists only on Fly replaced by this machine's loopback.
  const publicPort = await freePort();
  const internalPort = await freePort();
  const internalToken = randomBytes(32).toString('base64url');
  const authKeySecret = randomBytes(32).toString('base64url');
  const env: Record<string, string> = { ...fly.env };
  delete env.MEDIASOUP_UDP_LISTEN_IP; // fly-global-services: UDP then binds MEDIASOUP_LISTEN_IP (0.0.0.0)
  Object.assign(env, {
    PORT: String(publicPort),
    INTERNAL_HOST: '127.0.0.1', // fly-local-6pn
    INTERNAL_PORT: String(internalPort),
    MEDIASOUP_ANNOUNCED_IP: '127.0.0.1', // the app's dedicated IPv4 on Fly
    FLY_APP_NAME: fly.app, // set by Fly on every machine: AUTH_ISSUER's default
    DATABASE_URL: databaseUrl.toString(),
    INTERNAL_TOKEN: internalToken,
    AUTH_KEY_SECRET: authKeySecret,
  });
  assert(env.NODE_ENV === 'production', 'fly.toml sets NODE_ENV=production');
  // An env file rather than -e, so the token stays off command lines.
  const envFile = path.join(workDir, 'service.env');
  writeFileSync(envFile, Object.entries(env).map(([k, v]) => `${k}=${v}`).join('\n') + '\n', { mode: 0o600 });
  const rtcMin = Number(env.RTC_MIN_PORT);
  const rtcMax = Number(env.RTC_MAX_PORT);

  await check(
    'release_command applies the migrations',
    async () => {
      const command = fly.deploy.release_command.split(/\s+/);
      const { stdout, stderr } = await podman(['run', '--pull=never', '--rm', '--network', 'host', ...LIMITS, '--env-file', envFile, image, ...command], { timeoutMs: 60_000 });
      assert(/migrations applied \(postgres\)/.test(stdout), `release command printed: ${(stdout + stderr).trim().slice(-500)}`);
      const db = postgres(databaseUrl.toString(), { max: 1, onnotice: () => {} });
      try {
        const tables = await db<{ name: string }[]>`select table_name as name from information_schema.tables where table_schema = 'public' order by 1`;
        assert(tables.length > 0, 'no tables after the release command');
        return `${command.join(' ')}: tables ${tables.map((t) => t.name).join(', ')}`;
      } finally {
        await db.end({ timeout: 2 });
      }
    },
    true,
  );

  const container = `chat-backend-image-test-${runId}`;
  const base = `http://127.0.0.1:${publicPort}`;
  let readyMs = 0;
  await check(
    'service ready',
    async () => {
      const started = performance.now();
      created.container = container;
      await podman(['run', '--pull=never', '--detach', '--name', container, '--network', 'host', ...LIMITS, '--env-file', envFile, image]);
      await waitFor(
        async () => {
          const res = await fetch(`${base}/readyz`).catch(() => undefined);
          if (res?.status === 200) return true;
          const { stdout } = await podman(['inspect', '--format', '{{.State.Running}}', container]);
          if (stdout.trim() !== 'true') {
            const logs = await podman(['logs', container], { allowFailure: true });
            throw new Error(`container stopped before ready:\n${(logs.stdout + logs.stderr).trim().slice(-2000)}`);
          }
          return false;
        },
        { timeoutMs: READY_TIMEOUT_MS, intervalMs: 50, what: `GET ${base}/readyz to answer 200` },
      );
      readyMs = performance.now() - started;
      const body = (await (await fetch(`${base}/readyz`)).json());
      return `podman run to /readyz 200 in ${readyMs.toFixed(0)} ms: ${JSON.stringify(body)}`;
    },
    true,
  );

  // Idle memory: every process of the container, after start-up has settled.
  await sleep(3000);
  const idle = await containerMemory(container);

  await check('account API: register, login, profile', async () => {
    const username = `image_${runId}`;
    const password = `pw-${randomBytes(6).toString('hex')}`;
    // Fly's proxy sets Fly-Client-IP (TRUST_PROXY=fly keys rate limits on it).
    const headers = { 'content-type': 'application/json', 'fly-client-ip': '127.0.0.1' };
    const call = async (method: string, route: string, body?: unknown, token?: string) => {
      const res = await fetch(`${base}/api/v1/auth${route}`, {
        method,
        headers: token ? { ...headers, authorization: `Bearer ${token}` } : headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await res.json()) as { code: number; message: string; data: Record<string, any> };
      assert(res.status === 200 && json.code === 0, `${method} ${route}: HTTP ${res.status} ${JSON.stringify(json)}`);
      return json.data;
    };
    const registered = await call('POST', '/register', { username, email: `${username}@example.com`, password });
    const login = await call('POST', '/login', { account: username, password });
    assert(login.token !== registered.token, 'login gave the registration token again');
    const profile = await call('GET', '/profile', undefined, login.token);
    assert(profile.username === username && profile.id === registered.user.id, `profile ${JSON.stringify(profile)}`);
    assert(!('password' in profile) && !('password_hash' in profile), 'profile exposes a password field');
    return `user ${profile.id} ${profile.username}, created_at ${profile.created_at}`;
  });

  const internal = `http://127.0.0.1:${internalPort}`;
  await check('relay API only on the internal listener', async () => {
    const publicAnswer = await fetch(`${base}/internal/info`, { headers: { 'x-internal-token': internalToken } });
    assert(publicAnswer.status === 404, `public listener answered ${publicAnswer.status} for /internal/info`);
    const noToken = await fetch(`${internal}/internal/info`);
    assert(noToken.status === 401, `internal listener without token answered ${noToken.status}`);
    const info = await fetch(`${internal}/internal/info`, { headers: { 'x-internal-token': internalToken } });
    assert(info.status === 200, `internal listener with token answered ${info.status}`);
    const body = (await info.json()) as { workers?: unknown[] };
    assert(Array.isArray(body.workers) && body.workers.length === Number(env.MEDIASOUP_WORKERS), `workers ${JSON.stringify(body.workers)}`);
    return `public 404, internal 401 without token, 200 with it (${body.workers.length} workers)`;
  });

  await check('media flows through the relay', async () => {
    const relay = createRelayClient({ baseUrl: internal, token: internalToken });
    const router = await relay.createRouter();
    try {
      const { sendTransport, sender, receiver, consumers } = await openCall(relay, { peers, connectTimeoutMs: 15_000, router });
      const candidate = sendTransport.iceCandidates.find((c) => c.protocol === 'udp');
      assert(
        candidate && candidate.ip === '127.0.0.1' && candidate.port >= rtcMin && candidate.port <= rtcMax,
        `UDP candidate ${JSON.stringify(candidate)} is not 127.0.0.1 within ${rtcMin}-${rtcMax}`,
      );
      const { audio, video } = consumers;
      await relay.resumeConsumer(audio.id);
      await relay.resumeConsumer(video.id);
      await waitFor(() => receiver.count(audio.id) >= FLOWING.audio && receiver.count(video.id) >= FLOWING.video, {
        timeoutMs: 15_000,
        what: `${FLOWING.audio} audio and ${FLOWING.video} video packets at the receiver`,
      });
      sender.stop();
      assert(receiver.received.get(video.id)![0]!.keyframe, 'video did not start with a keyframe');
      assert(sender.sendErrors.length === 0, `send errors: ${String(sender.sendErrors[0])}`);
      return `${receiver.count(audio.id)} opus and ${receiver.count(video.id)} VP8 packets received via ${candidate.ip}:${candidate.port}/udp`;
    } finally {
      for (const peer of peers.splice(0)) await peer.close().catch(() => {});
      await relay.closeRouter(router.id).catch(() => {});
    }
  });

  await check('a recording inside the container', async () => {
    // The container's own ffmpeg sends a generated VP8 + Opus source into two plain transports (ingest),
    // the relay records those producers with the same ffmpeg, and its ffprobe reads the file back.
    const relay = createRelayClient({ baseUrl: internal, token: internalToken });
    const router = await relay.createRouter();
    let sender: ChildProcess | undefined;
    let senderPid: string | undefined;
    try {
      const plain = {
        video: await relay.createPlainTransport({ routerId: router.id, comedia: true, rtcpMux: false }),
        audio: await relay.createPlainTransport({ routerId: router.id, comedia: true, rtcpMux: false }),
      };
      const producers = {
        video: await relay.createProducer({ transportId: plain.video.id, kind: 'video', rtpParameters: ingestRtpParameters.video }),
        audio: await relay.createProducer({ transportId: plain.audio.id, kind: 'audio', rtpParameters: ingestRtpParameters.audio }),
      };
      const target = (p: { ip: string; port: number; rtcpPort?: number }) => ({ ip: p.ip, port: p.port, rtcpPort: p.rtcpPort! });
      const source = testSourceArgs({ video: target(plain.video), audio: target(plain.audio) }, 30);
      // The shell prints its pid, then becomes ffmpeg: the pid to stop it by (podman exec does not pass a signal on).
      sender = spawn('podman', [...PODMAN, 'exec', container, 'sh', '-c', 'echo $$; exec ffmpeg "$@"', 'sh', ...source], { stdio: ['ignore', 'pipe', 'pipe'] });
      longRunning.add(sender);
      sender.stdout!.once('data', (chunk: Buffer) => (senderPid = chunk.toString().trim()));
      let senderErr = '';
      sender.stderr!.on('data', (chunk: Buffer) => (senderErr = (senderErr + chunk.toString()).slice(-2000)));
      const bytesIn = async (id: string) => Number(((await relay.producerStats(id))[0] as { byteCount?: number } | undefined)?.byteCount ?? 0);
      await waitFor(async () => (await bytesIn(producers.video.id)) > 0 && (await bytesIn(producers.audio.id)) > 0, {
        timeoutMs: 15_000,
        what: `the container's ffmpeg RTP at both producers (${senderErr.trim()})`,
      });

      const recording = await relay.createRecording({ routerId: router.id, producerIds: [producers.audio.id, producers.video.id] });
      await sleep(RECORD_MS);
      const stopped = await relay.stopRecording(recording.id);
      assert(stopped.state === 'stopped' && (stopped.bytes ?? 0) > 0, `recording ended ${JSON.stringify(stopped)}`);
      const { stdout: dir } = await podman(['exec', container, 'sh', '-c', 'printf %s "$RECORDINGS_DIR"']);
      const file = `${dir}/${stopped.file}`;
      const probe = parseProbe((await podman(['exec', container, 'ffprobe', ...ffprobeArgs(file)])).stdout);
      const streams = probe.streams.map((st) => `${st.codec_type}/${st.codec_name}`).sort();
      assert(JSON.stringify(streams) === JSON.stringify(['audio/opus', 'video/vp8']), `streams ${streams.join(', ')}`);
      assert(probe.durationS >= RECORDED_MIN_S, `duration ${probe.durationS} s after ${RECORD_MS} ms of recording`);
      const decoded = withoutMuxerComplaints((await podman(['exec', container, 'ffmpeg', ...decodeCheckArgs(file)])).stderr);
      assert(decoded === '', `decode errors: ${decoded.slice(0, 500)}`);
      await podman(['exec', container, 'rm', '-f', file]);
      return `${file}: ${probe.formatName}, ${streams.join(' + ')}, ${probe.durationS} s, ${stopped.bytes} bytes, decodes clean`;
    } finally {
      if (senderPid) await podman(['exec', container, 'sh', '-c', `kill ${Number(senderPid)}`], { allowFailure: true });
      if (sender) {
        sender.kill('SIGTERM');
        if (sender.exitCode === null && sender.signalCode === null) await new Promise((resolve) => sender!.once('close', resolve));
        longRunning.delete(sender);
      }
      await relay.closeRouter(router.id).catch(() => {});
    }
  });

  await check('runs as uid 1000 under tini', async () => {
    const processes = await containerProcesses(container);
    const { stdout: uid } = await podman(['exec', container, 'id', '-u']);
    assert(uid.trim() === '1000', `podman exec id -u: ${uid.trim()}`);
    const first = processes.find((p) => p.pid === 1);
    assert(first && /^\/usr\/bin\/tini\b/.test(first.args), `PID 1 is ${first?.args ?? 'missing'}`);
    const node = processes.find((p) => /^node\b/.test(p.args));
    assert(node, `no node process: ${processes.map((p) => p.args).join('; ')}`);
    const workers = processes.filter((p) => /mediasoup-worker/.test(p.args));
    assert(workers.length === Number(env.MEDIASOUP_WORKERS), `${workers.length} mediasoup workers`);
    // Real, effective, saved and filesystem uid of every process, as the host's kernel sees them.
    const uids = processes.map((p) => ({ args: p.args, uids: /^Uid:\s+(.*)$/m.exec(readFileSync(`/proc/${p.hostPid}/status`, 'utf8'))?.[1]?.split(/\s+/) ?? [] }));
    const notNode = uids.filter((p) => p.uids.length !== 4 || p.uids.some((u) => u !== '1000'));
    assert(notNode.length === 0, `processes not running as uid 1000: ${notNode.map((p) => `${p.args} (${p.uids.join(' ')})`).join('; ')}`);
    return `${processes.length} processes (tini, node, ${workers.length} workers) as uid 1000`;
  });

  await check('SIGTERM drains and exits 0', async () => {
    const killTimeoutS = Number.parseInt(fly.kill_timeout, 10);
    const started = performance.now();
    await podman(['stop', '--time', String(killTimeoutS), container], { timeoutMs: (killTimeoutS + 30) * 1000 });
    const stoppedMs = performance.now() - started;
    const { stdout } = await podman(['inspect', '--format', '{{.State.ExitCode}}', container]);
    const logs = await podman(['logs', container]);
    assert(stdout.trim() === '0', `exit code ${stdout.trim()}`);
    assert(stoppedMs < killTimeoutS * 1000, `took ${stoppedMs.toFixed(0)} ms, kill_timeout is ${killTimeoutS} s`);
    // The service's own shutdown ran (tini passed the signal on), rather than a kill.
    assert(/"msg":"shutdown complete"/.test(logs.stdout + logs.stderr), 'no "shutdown complete" in the log');
    return `podman stop took ${stoppedMs.toFixed(0)} ms (kill_timeout ${killTimeoutS} s), "shutdown complete" logged, exit 0`;
  });

  const { stdout: size } = await podman(['image', 'inspect', '--format', '{{.Size}}', image]);
  const sizeMb = Number(size.trim()) / 1e6;
  console.log(`image ${image}: ${sizeMb.toFixed(0)} MB; podman run to ready ${readyMs.toFixed(0)} ms; idle RSS ${idle.summary}`);
  console.log(`BENCH image-size-mb ${sizeMb.toFixed(0)}`);
  console.log(`BENCH image-ready-ms ${readyMs.toFixed(0)}`);
  console.log(`BENCH image-idle-rss-mb ${idle.totalMb.toFixed(0)}`);
  console.log(`BENCH image-idle-node-rss-mb ${idle.nodeMb.toFixed(0)}`);
}

interface ContainerProcess {
  pid: number;
  hostPid: number;
  args: string;
}

async function containerProcesses(container: string): Promise<ContainerProcess[]> {
  const { stdout } = await podman(['top', container, 'pid', 'hpid', 'args']);
  const processes: ContainerProcess[] = [];
  for (const line of stdout.trim().split('\n').slice(1)) {
    const match = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    // A line that starts with no pids continues the arguments of the process before it: an argument
    // may hold line breaks (the recordings' ffmpeg watchdog is an `sh -c` script of several lines).
    if (match) processes.push({ pid: Number(match[1]), hostPid: Number(match[2]), args: match[3]!.trim() });
    else if (processes.length > 0) processes.at(-1)!.args += ` ${line.trim()}`;
  }
  return processes;
}

/** Resident memory of every process in the container, read from /proc on the host. */
async function containerMemory(container: string): Promise<{ totalMb: number; nodeMb: number; summary: string }> {
  const processes = await containerProcesses(container);
  let totalMb = 0;
  let nodeMb = 0;
  const parts: string[] = [];
  for (const p of processes) {
    const status = readFileSync(`/proc/${p.hostPid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    const mb = kb / 1024;
    totalMb += mb;
    const name = p.args.split(' ')[0]!.split('/').at(-1)!;
    if (name === 'node') nodeMb = mb;
    parts.push(`${name} ${mb.toFixed(0)}`);
  }
  return { totalMb, nodeMb, summary: `${totalMb.toFixed(0)} MB (${parts.join(', ')} MB)` };
}

/** Prints the checks not run and the closing 'image: N passed, M failed' line; returns M. */
function printSummary(): number {
  const passed = PLANNED.filter((name) => results.get(name)?.ok).length;
  const notRun = PLANNED.filter((name) => !results.has(name));
  if (notRun.length) console.log(`  not run: ${notRun.join('; ')}`);
  console.log(`image: ${passed} passed, ${PLANNED.length - passed} failed`);
  return PLANNED.length - passed;
}

const started = performance.now();
console.log(`test:image: run ${runId}, work dir ${workDir}`);
let crashed: unknown;
try {
  await main();
} catch (error) {
  if (!(error instanceof StopRun)) crashed = error;
} finally {
  await cleanup();
}
if (crashed) {
  console.log(`  FAIL  run stopped: ${crashed instanceof Error ? crashed.stack ?? crashed.message : inspect(crashed)}`);
}
console.log(`test:image finished in ${((performance.now() - started) / 1000).toFixed(0)} s`);
const failed = printSummary();
process.exit(failed === 0 && !crashed ? 0 : 1);
