// The page of test/e2e/turn-relay.test.ts, bundled with mediasoup-client by esbuild: one Chromium tab
// sends its fake microphone and camera through the relay and receives both back, on transports given
// the ICE servers and policy the test chooses (TURN only, 'relay'; or none). Signaling is
// window.signal(), which the test exposes; the test reads connection states, the ICE pair in use and
// the inbound RTP counters Chromium itself keeps.
import { Device, type types } from 'mediasoup-client';

type Signal = (op: 'router' | 'transport' | 'connect' | 'produce' | 'consume' | 'resume', body: unknown) => Promise<any>;

declare global {
  interface Window {
    signal: Signal;
    turnCall: typeof turnCall;
  }
}

let call: { send: types.Transport; recv: types.Transport; producers: types.Producer[]; consumers: types.Consumer[] } | undefined;

function current() {
  if (!call) throw new Error('no call open');
  return call;
}

function wire(transport: types.Transport) {
  transport.on('connect', ({ dtlsParameters }, callback, errback) => {
    window.signal('connect', { transportId: transport.id, dtlsParameters }).then(() => callback(), errback);
  });
}

async function open(iceServers: RTCIceServer[], iceTransportPolicy: RTCIceTransportPolicy) {
  const device = new Device();
  await device.load({ routerRtpCapabilities: await window.signal('router', {}) });
  const options = { iceServers, iceTransportPolicy };
  const send = device.createSendTransport({ ...(await window.signal('transport', { direction: 'send' })), ...options });
  wire(send);
  send.on('produce', ({ kind, rtpParameters }, callback, errback) => {
    window.signal('produce', { transportId: send.id, kind, rtpParameters }).then(callback, errback);
  });
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 360, frameRate: 15 } });
  const producers = [await send.produce({ track: stream.getAudioTracks()[0]! }), await send.produce({ track: stream.getVideoTracks()[0]! })];

  const recv = device.createRecvTransport({ ...(await window.signal('transport', { direction: 'recv' })), ...options });
  wire(recv);
  const consumers: types.Consumer[] = [];
  for (const producer of producers) {
    const params = await window.signal('consume', { transportId: recv.id, producerId: producer.id, rtpCapabilities: device.rtpCapabilities });
    const consumer = await recv.consume(params);
    const element = document.createElement(consumer.kind === 'audio' ? 'audio' : 'video');
    element.muted = true;
    element.autoplay = true;
    element.srcObject = new MediaStream([consumer.track]);
    document.body.append(element);
    await window.signal('resume', { consumerId: consumer.id });
    consumers.push(consumer);
  }
  call = { send, recv, producers, consumers };
  return { sendTransportId: send.id, recvTransportId: recv.id, producerIds: producers.map((p) => p.id), consumerIds: consumers.map((c) => c.id) };
}

function states() {
  const { send, recv } = current();
  return { send: send.connectionState, recv: recv.connectionState };
}

/** Packets Chromium received per kind (inbound-rtp of each consumer). */
async function inbound() {
  const counts: Record<string, number> = { audio: 0, video: 0 };
  for (const consumer of current().consumers) {
    const stats = [...(await consumer.getStats()).values()] as Array<Record<string, any>>;
    const rtp = stats.find((s) => s.type === 'inbound-rtp');
    counts[consumer.kind] = Number(rtp?.packetsReceived ?? 0);
  }
  return counts as { audio: number; video: number };
}

/** The local candidate of the ICE pair each transport uses now: its type and, for a relay candidate, how it reaches TURN. */
async function selected() {
  const result: Record<string, { candidateType: string; relayProtocol: string; protocol: string } | null> = {};
  for (const which of ['send', 'recv'] as const) {
    const stats = [...(await current()[which].getStats()).values()] as Array<Record<string, any>>;
    const transport = stats.find((s) => s.type === 'transport');
    const pair = stats.find((s) => s.type === 'candidate-pair' && s.id === transport?.selectedCandidatePairId);
    const local = stats.find((s) => s.type === 'local-candidate' && s.id === pair?.localCandidateId);
    result[which] = local ? { candidateType: String(local.candidateType), relayProtocol: String(local.relayProtocol ?? ''), protocol: String(local.protocol) } : null;
  }
  return result as { send: typeof result.send; recv: typeof result.recv };
}

function close() {
  if (!call) return;
  call.send.close();
  call.recv.close();
  call = undefined;
}

const turnCall = { open, states, inbound, selected, close };
window.turnCall = turnCall;
