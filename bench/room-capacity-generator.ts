// The load generator of bench/room-capacity.ts, in a child process of its own so that its CPU can be
// told apart from the bench's and the workers': one UDP sender of VP8-like RTP into the producer's
// PlainTransport, and UDP sink sockets that count, per SSRC, the packets the consumers' PlainTransports
// deliver and the one-way latency of each (the send time travels in the payload; sender and sinks
// share this process's clock). Driven by the parent over IPC; see GeneratorCommand below.
//
// Reading every packet costs the generator about as much CPU as forwarding it costs the worker, so the
// capacity ramps count at the kernel instead: `hold` mode (a second child) binds sink sockets with the
// smallest receive buffer and then blocks its thread for good, never reading them. Once the first
// packet or two fill a buffer, every datagram that reaches the socket is counted by the kernel as a
// drop (the last column of /proc/net/udp): an exact count of what arrived, at no cost to user space.
import { createSocket, type Socket } from 'node:dgram';
import { readFileSync } from 'node:fs';

export type GeneratorCommand =
  | { type: 'start'; sinks: number; recvBufferBytes: number; ssrc: number; payloadType: number; payloadBytes: number; countingPorts: number[] }
  /** Feed the producer transport at `port`; `paced`: packets one by one (1 ms ticks) instead of a burst per frame. */
  | { type: 'target'; port: number; packetsPerSecond: number; paced: boolean }
  | { type: 'keyframe' }
  | { type: 'histograms'; on: boolean }
  | { type: 'snapshot'; id: number }
  | { type: 'stop' };

export interface SsrcCount {
  ssrc: number;
  packets: number;
  /** Sum of the one-way latencies in µs. */
  latencySumUs: number;
  /** Latency histogram in 10 µs buckets (the last one holds everything beyond), when histograms are on. */
  histogram?: number[];
}

export type GeneratorReply =
  | { type: 'ready'; senderPort: number; sinkPorts: number[]; rtcpPort: number }
  | {
      type: 'snapshot';
      id: number;
      /** Media packets sent since start. */
      sent: number;
      counts: SsrcCount[];
      /** The generator process's CPU (user + system, µs) since start. */
      cpuUs: number;
      /** Datagrams the kernel dropped at the reading sink sockets (full receive buffer), from /proc/net/udp. */
      sinkDrops: number;
      /** Datagrams that reached the held (never read) counting sockets: their kernel drop counters. */
      counted: number;
    };

const FRAMES_PER_SECOND = 30;
const KEYFRAME_EVERY_FRAMES = 60;
const HISTOGRAM_BUCKET_US = 10;
const HISTOGRAM_BUCKETS = 5000; // 50 ms

const send = (reply: GeneratorReply) => process.send!(reply);

let sender: Socket | undefined;
let rtcpSink: Socket | undefined;
const sinks: Socket[] = [];
let target: { port: number; packetsPerSecond: number; paced: boolean } | undefined;
let lastTick = 0;
let packetInFrame = 0;
let frameKey = false;
let frameTimer: NodeJS.Timeout | undefined;
let config: Extract<GeneratorCommand, { type: 'start' }> | undefined;
let histograms = false;
let sent = 0;
let seq = 0;
let rtpTimestamp = 0;
let frame = 0;
let pictureId = 0;
let owed = 0;
let keyframeWanted = true;
const counts = new Map<number, SsrcCount & { buckets?: Uint32Array }>();

function bind(socket: Socket, recvBufferBytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject);
      socket.setRecvBufferSize(recvBufferBytes);
      resolve(socket.address().port);
    });
  });
}

function onSinkMessage(msg: Buffer): void {
  const now = performance.now();
  // RTCP (the consumers' sender reports) shares the port: packet types 200-206, not counted.
  if (msg.length < 12 || (msg[1]! >= 200 && msg[1]! <= 206)) return;
  const ssrc = msg.readUInt32BE(8);
  let offset = 12 + 4 * (msg[0]! & 0x0f);
  if (msg[0]! & 0x10) offset += 4 + 4 * msg.readUInt16BE(offset + 2);
  let entry = counts.get(ssrc);
  if (!entry) {
    entry = { ssrc, packets: 0, latencySumUs: 0 };
    counts.set(ssrc, entry);
  }
  entry.packets += 1;
  if (msg.length >= offset + 16) {
    const latencyUs = (now - msg.readDoubleBE(offset + 8)) * 1000;
    entry.latencySumUs += latencyUs;
    if (histograms) {
      entry.buckets ??= new Uint32Array(HISTOGRAM_BUCKETS);
      entry.buckets[Math.min(HISTOGRAM_BUCKETS - 1, Math.max(0, Math.floor(latencyUs / HISTOGRAM_BUCKET_US)))]! += 1;
    }
  }
}

/** One VP8-like RTP packet: descriptor with a 15-bit picture id, then the frame bytes; the send time at payload offset 8. */
function packet(first: boolean, last: boolean, keyframe: boolean): Buffer {
  const c = config!;
  const buf = Buffer.alloc(12 + c.payloadBytes);
  buf[0] = 0x80;
  buf[1] = (last ? 0x80 : 0) | c.payloadType;
  buf.writeUInt16BE(seq, 2);
  buf.writeUInt32BE(rtpTimestamp >>> 0, 4);
  buf.writeUInt32BE(c.ssrc, 8);
  const p = 12;
  buf[p] = first ? 0x90 : 0x80; // X=1, S=start of partition 0
  buf[p + 1] = 0x80; // I: picture id present
  buf[p + 2] = 0x80 | ((pictureId >> 8) & 0x7f); // M: 15-bit picture id
  buf[p + 3] = pictureId & 0xff;
  buf[p + 4] = keyframe && first ? 0x10 : 0x11; // VP8 frame tag: P bit 0 = key frame
  buf.writeDoubleBE(performance.now(), p + 8);
  seq = (seq + 1) & 0xffff;
  return buf;
}

/** Sends what the stream owes since the last tick (by the clock, so a late timer does not lower the rate). */
function tick(): void {
  if (!target || !sender) return;
  const now = performance.now();
  owed += (target.packetsPerSecond * (now - lastTick)) / 1000;
  lastTick = now;
  const packetsPerFrame = Math.max(1, Math.round(target.packetsPerSecond / FRAMES_PER_SECOND));
  for (; owed >= 1; owed -= 1) {
    const first = packetInFrame === 0;
    if (first) {
      frameKey = keyframeWanted || frame % KEYFRAME_EVERY_FRAMES === 0;
      keyframeWanted = false;
    }
    const last = packetInFrame === packetsPerFrame - 1;
    sender.send(packet(first, last, frameKey), target.port, '127.0.0.1');
    sent += 1;
    packetInFrame += 1;
    if (last) {
      packetInFrame = 0;
      frame += 1;
      pictureId = (pictureId + 1) & 0x7fff;
      rtpTimestamp += 90_000 / FRAMES_PER_SECOND;
    }
  }
}

/** The kernel's drop counters (last column of /proc/net/udp) summed over the sockets bound to `ports`. */
function udpDrops(ports: number[]): number {
  const wanted = new Set(ports.map((p) => p.toString(16).toUpperCase().padStart(4, '0')));
  let drops = 0;
  for (const line of readFileSync('/proc/net/udp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    const port = fields[1]?.split(':')[1];
    if (port && wanted.has(port)) drops += Number(fields[fields.length - 1]);
  }
  return drops;
}

let cpuStart = process.cpuUsage();

process.on('message', (command: GeneratorCommand) => void onCommand(command));
async function onCommand(command: GeneratorCommand): Promise<void> {
  switch (command.type) {
    case 'start': {
      config = command;
      sender = createSocket('udp4');
      const senderPort = await bind(sender, command.recvBufferBytes);
      sender.on('message', () => {}); // the producer transport's receiver reports
      const sinkPorts: number[] = [];
      for (let i = 0; i < command.sinks; i += 1) {
        const sink = createSocket('udp4');
        sink.on('message', onSinkMessage);
        sinkPorts.push(await bind(sink, command.recvBufferBytes));
        sinks.push(sink);
      }
      rtcpSink = createSocket('udp4');
      rtcpSink.on('message', () => {}); // the consumers' sender reports when RTCP has a port of its own
      const rtcpPort = await bind(rtcpSink, command.recvBufferBytes);
      cpuStart = process.cpuUsage();
      send({ type: 'ready', senderPort, sinkPorts, rtcpPort });
      break;
    }
    case 'target':
      target = { port: command.port, packetsPerSecond: command.packetsPerSecond, paced: command.paced };
      owed = 0;
      lastTick = performance.now();
      keyframeWanted = true;
      clearInterval(frameTimer);
      frameTimer = setInterval(tick, command.paced ? 1 : 1000 / FRAMES_PER_SECOND);
      break;
    case 'keyframe':
      keyframeWanted = true;
      break;
    case 'histograms':
      histograms = command.on;
      break;
    case 'snapshot': {
      const cpu = process.cpuUsage(cpuStart);
      send({
        type: 'snapshot',
        id: command.id,
        sent,
        counts: [...counts.values()].map(({ ssrc, packets, latencySumUs, buckets }) => ({
          ssrc,
          packets,
          latencySumUs,
          ...(buckets ? { histogram: Array.from(buckets) } : {}),
        })),
        cpuUs: cpu.user + cpu.system,
        sinkDrops: udpDrops(sinks.map((sink) => sink.address().port)),
        counted: udpDrops(config?.countingPorts ?? []),
      });
      break;
    }
    case 'stop':
      close();
      process.disconnect();
      break;
  }
}
process.on('disconnect', close);

let closed = false;
function close(): void {
  if (closed) return;
  closed = true;
  clearInterval(frameTimer);
  sender?.close();
  rtcpSink?.close();
  for (const sink of sinks) sink.close();
}

// `hold <count>`: bind the counting sockets, tell the parent their ports, then block this thread until killed.
if (process.argv[2] === 'hold') {
  const held: Socket[] = [];
  const ports: number[] = [];
  for (let i = 0; i < Number(process.argv[3]); i += 1) {
    const socket = createSocket('udp4');
    ports.push(await bind(socket, 1)); // the kernel's minimum receive buffer: a packet or two
    held.push(socket);
  }
  // Blocked, the thread cannot hear of its parent's end over IPC: it looks at its parent id each second
  // and gives up after 10 minutes whatever happens.
  const parent = process.ppid;
  process.send!({ type: 'held', ports }, () => {
    const cell = new Int32Array(new SharedArrayBuffer(4));
    const deadline = Date.now() + 600_000;
    while (process.ppid === parent && Date.now() < deadline) Atomics.wait(cell, 0, 0, 1_000);
    process.exit(0);
  });
}
