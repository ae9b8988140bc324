// Debian's ffmpeg driven for real by the recording and ingest tests: a generated VP8 + Opus test
// source sent as RTP (what an ingest bridge sends), and ffprobe/ffmpeg reading the files back.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const INGEST = {
  video: { payloadType: 101, ssrc: 11_111_111 },
  audio: { payloadType: 100, ssrc: 22_222_222 },
} as const;

/** The rtpParameters of the producers an ingest of testSource() makes. */
export const ingestRtpParameters = {
  video: {
    codecs: [{ mimeType: 'video/VP8', payloadType: INGEST.video.payloadType, clockRate: 90000 }],
    encodings: [{ ssrc: INGEST.video.ssrc }],
  },
  audio: {
    codecs: [{ mimeType: 'audio/opus', payloadType: INGEST.audio.payloadType, clockRate: 48000, channels: 2, parameters: { 'sprop-stereo': 1 } }],
    encodings: [{ ssrc: INGEST.audio.ssrc }],
  },
};

export interface RtpTarget {
  ip: string;
  port: number;
  /** Omitted: RTCP to `port` too (rtcp-mux). */
  rtcpPort?: number;
}

export interface TestSource {
  readonly process: ChildProcess;
  readonly stderr: () => string;
  /** Resolves with the exit code once ffmpeg is gone (SIGTERM first). */
  stop(): Promise<number | null>;
}

/**
 * `ffmpeg -re` sending a 320x240 30 fps VP8 test pattern (a key frame every second) and a 440 Hz Opus
 * tone as RTP to the targets given, for `durationS` at most.
 */
export function testSource(targets: { video?: RtpTarget; audio?: RtpTarget }, durationS = 60): TestSource {
  const child = spawn('ffmpeg', testSourceArgs(targets, durationS), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-8192)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    process: child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** testSource()'s ffmpeg arguments, for an ffmpeg run elsewhere (test/image/run.ts: inside the container). */
export function testSourceArgs(targets: { video?: RtpTarget; audio?: RtpTarget }, durationS: number): string[] {
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error'];
  args.push('-re', '-f', 'lavfi', '-i', `testsrc=size=320x240:rate=30:duration=${durationS}`);
  args.push('-re', '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${durationS}`);
  const url = ({ ip, port, rtcpPort }: RtpTarget) => `rtp://${ip}:${port}?rtcpport=${rtcpPort ?? port}&pkt_size=1200`;
  if (targets.video) {
    args.push('-map', '0:v', '-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '16', '-b:v', '1M', '-g', '15', '-keyint_min', '15');
    args.push('-payload_type', String(INGEST.video.payloadType), '-ssrc', String(INGEST.video.ssrc), '-f', 'rtp', url(targets.video));
  }
  if (targets.audio) {
    args.push('-map', '1:a', '-c:a', 'libopus', '-ac', '2', '-b:a', '64k');
    args.push('-payload_type', String(INGEST.audio.payloadType), '-ssrc', String(INGEST.audio.ssrc), '-f', 'rtp', url(targets.audio));
  }
  return args;
}

export interface Probe {
  /** width and height: video streams only. */
  streams: { codec_type: string; codec_name: string; width?: number; height?: number }[];
  durationS: number;
  formatName: string;
}

export async function ffprobe(file: string): Promise<Probe> {
  const { stdout } = await run('ffprobe', ffprobeArgs(file));
  return parseProbe(stdout);
}

/** ffprobe()'s arguments and the parse of its output (test/image/run.ts runs it inside the container). */
export function ffprobeArgs(file: string): string[] {
  return ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,width,height:format=duration,format_name', '-of', 'json', file];
}

export function parseProbe(stdout: string): Probe {
  const parsed = JSON.parse(stdout) as { streams: Probe['streams']; format: { duration: string; format_name: string } };
  return { streams: parsed.streams, durationS: Number(parsed.format.duration), formatName: parsed.format.format_name };
}

/**
 * The muxer's complaint about equal timestamps in a stream-copied file (RTP timestamps re-based on the
 * first RTCP sender report): the null muxer prints it at `-v error`, but it is no decode error.
 */
const NOT_DECODE_ERRORS = [/non monotonically increasing dts to muxer/, /^\s*Last message repeated \d+ times$/];

/**
 * What `ffmpeg -v error -i file -f null -` prints, without the muxer's timestamp complaints (see
 * NOT_DECODE_ERRORS): empty for a file that decodes clean.
 */
export async function decodeErrors(file: string): Promise<string> {
  const { stderr } = await run('ffmpeg', decodeCheckArgs(file));
  return withoutMuxerComplaints(stderr);
}

/** `ffmpeg -v error -i file -f null -`'s arguments (test/image/run.ts runs it inside the container). */
export function decodeCheckArgs(file: string): string[] {
  return ['-nostdin', '-v', 'error', '-i', file, '-f', 'null', '-'];
}

/** The decode check's output without the muxer's timestamp complaints (NOT_DECODE_ERRORS). */
export function withoutMuxerComplaints(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '' && !NOT_DECODE_ERRORS.some((pattern) => pattern.test(line)))
    .join('\n');
}
