// The page of test/e2e/browser-calls.test.ts, bundled with mediasoup-client by esbuild: one Chromium
// tab sends the fake camera in three simulcast encodings through the relay and receives it back.
// Signaling is window.signal(), a function the test exposes (it calls the relay with the typed client);
// the test drives the call through window.calls and reads what Chromium itself measures.
import { Device, type types } from 'mediasoup-client';

type Signal = (op: 'router' | 'transport' | 'connect' | 'produce' | 'consume' | 'resume', body: unknown) => Promise<any>;

declare global {
  interface Window {
    signal: Signal;
    calls: typeof calls;
  }
}

/** Chromium's fake camera at 720p in three layers: 320x180, 640x360, 1280x720. */
const ENCODINGS: types.RtpEncodingParameters[] = [
  { scaleResolutionDownBy: 4, maxBitrate: 150_000 },
  { scaleResolutionDownBy: 2, maxBitrate: 500_000 },
  { scaleResolutionDownBy: 1, maxBitrate: 1_500_000 },
];

let call: { send: types.Transport; recv: types.Transport; producer: types.Producer; consumer: types.Consumer } | undefined;

function current() {
  if (!call) throw new Error('no call open');
  return call;
}

function wire(transport: types.Transport) {
  transport.on('connect', ({ dtlsParameters }, callback, errback) => {
    window.signal('connect', { transportId: transport.id, dtlsParameters }).then(() => callback(), errback);
  });
}

async function open() {
  const device = new Device();
  await device.load({ routerRtpCapabilities: await window.signal('router', {}) });
  const send = device.createSendTransport(await window.signal('transport', { direction: 'send' }));
  wire(send);
  send.on('produce', ({ kind, rtpParameters }, callback, errback) => {
    window.signal('produce', { transportId: send.id, kind, rtpParameters }).then(callback, errback);
  });
  const stream = await navigator.mediaDevices.getUserMedia({ audio: false, video: { width: 1280, height: 720, frameRate: 30 } });
  const producer = await send.produce({ track: stream.getVideoTracks()[0]!, encodings: ENCODINGS });

  const recv = device.createRecvTransport(await window.signal('transport', { direction: 'recv' }));
  wire(recv);
  const params = await window.signal('consume', { transportId: recv.id, producerId: producer.id, rtpCapabilities: device.rtpCapabilities });
  const consumer = await recv.consume(params);
  const video = document.createElement('video');
  video.muted = true;
  video.autoplay = true;
  video.srcObject = new MediaStream([consumer.track]);
  document.body.append(video);
  await window.signal('resume', { consumerId: consumer.id });
  call = { send, recv, producer, consumer };
  return {
    producerId: producer.id,
    consumerId: consumer.id,
    sendTransportId: send.id,
    recvTransportId: recv.id,
    encodings: producer.rtpParameters.encodings?.length ?? 0,
  };
}

/** The receiver's inbound-rtp: packets, bytes, frames and the size of what it decodes. */
async function inbound() {
  const stats = [...(await current().consumer.getStats()).values()] as Array<Record<string, any>>;
  const rtp = stats.find((s) => s.type === 'inbound-rtp');
  return {
    packetsReceived: Number(rtp?.packetsReceived ?? 0),
    bytesReceived: Number(rtp?.bytesReceived ?? 0),
    framesDecoded: Number(rtp?.framesDecoded ?? 0),
    frameWidth: Number(rtp?.frameWidth ?? 0),
    frameHeight: Number(rtp?.frameHeight ?? 0),
  };
}

/** Packets sent by the producer, all layers together. */
async function outbound() {
  const stats = [...(await current().producer.getStats()).values()] as Array<Record<string, any>>;
  return stats.filter((s) => s.type === 'outbound-rtp').reduce((sum, s) => sum + Number(s.packetsSent ?? 0), 0);
}

async function restartIce(which: 'send' | 'recv', iceParameters: types.IceParameters) {
  await current()[which].restartIce({ iceParameters });
}

/**
 * The ICE pair Chromium uses on that transport now: its state, and the username fragment of the
 * relay's side it checks against (what Chromium sends in its STUN requests).
 */
async function selectedPair(which: 'send' | 'recv') {
  const stats = [...(await current()[which].getStats()).values()] as Array<Record<string, any>>;
  const transport = stats.find((s) => s.type === 'transport');
  const pair = stats.find((s) => s.type === 'candidate-pair' && s.id === transport?.selectedCandidatePairId);
  const remote = stats.find((s) => s.type === 'remote-candidate' && s.id === pair?.remoteCandidateId);
  return {
    iceState: String(transport?.iceState ?? ''),
    pairState: String(pair?.state ?? ''),
    remoteUsernameFragment: remote?.usernameFragment === undefined ? null : String(remote.usernameFragment),
    requestsSent: Number(pair?.requestsSent ?? 0),
    responsesReceived: Number(pair?.responsesReceived ?? 0),
    bytesReceived: Number(pair?.bytesReceived ?? 0),
  };
}

/** Closes that transport's RTCPeerConnection, as a tab that hangs up does. */
function closeTransport(which: 'send' | 'recv') {
  current()[which].close();
}

const calls = { open, inbound, outbound, restartIce, selectedPair, closeTransport };
window.calls = calls;
