// One call through the relay, set up the way a signaling server sets it up: a router, a send transport
// with a werift SendPeer producing opus and VP8, a recv transport with a RecvPeer consuming both.
// Shared by the e2e tests and the image check (so no vitest here: see call-app.ts); each asserts what it needs on the returned parts.
import type { RelayClient } from '../../../src/client/relay-client.js';
import { OPUS, RecvPeer, SendPeer, VP8, type SendPeerOptions } from './peer.js';
import { receiverRtpCapabilities } from './sdp.js';

type Router = Awaited<ReturnType<RelayClient['createRouter']>>;
type Transport = Awaited<ReturnType<RelayClient['createTransport']>>;
type Producer = Awaited<ReturnType<RelayClient['createProducer']>>;
type Consumer = Awaited<ReturnType<RelayClient['createConsumer']>>;

export interface Closable {
  close(): Promise<void>;
}

export interface OpenCallOptions {
  /** Each peer is pushed here as soon as it exists, so the caller's clean-up closes it also when a later step fails. */
  peers: Closable[];
  /** A router already made (the caller closes it); by default one is created with `routerOptions`. */
  router?: Router;
  /** Body of POST /routers when the call makes its router. */
  routerOptions?: Parameters<RelayClient['createRouter']>[0];
  sender?: SendPeerOptions;
  /** How long each peer may take to connect (default 10 s). */
  connectTimeoutMs?: number;
}

export interface Call {
  router: Router;
  sendTransport: Transport;
  recvTransport: Transport;
  sender: SendPeer;
  receiver: RecvPeer;
  producers: { audio: Producer; video: Producer };
  /** Created paused, as the relay creates every consumer; the caller resumes them. */
  consumers: { audio: Consumer; video: Consumer };
}

/**
 * Router, both transports connected, audio and video producers (the sender already sending) and their
 * consumers, still paused.
 * @example
 * const call = await openCall(relay, { peers })
 * await relay.resumeConsumer(call.consumers.audio.id)
 */
export async function openCall(relay: RelayClient, options: OpenCallOptions): Promise<Call> {
  const { peers, connectTimeoutMs } = options;
  const router = options.router ?? (await relay.createRouter(options.routerOptions));
  const sendTransport = await relay.createTransport({ routerId: router.id, direction: 'send' });
  const sender = await SendPeer.create(sendTransport, options.sender);
  peers.push(sender);
  await relay.connectTransport(sendTransport.id, sender.dtlsParameters);
  await sender.connected(connectTimeoutMs);
  const audioProducer = await relay.createProducer({ transportId: sendTransport.id, kind: 'audio', rtpParameters: sender.rtpParameters.audio });
  const videoProducer = await relay.createProducer({ transportId: sendTransport.id, kind: 'video', rtpParameters: sender.rtpParameters.video });
  sender.start();

  // Receive side: consumers first (created paused), then the offer written from their rtpParameters.
  const recvTransport = await relay.createTransport({ routerId: router.id, direction: 'recv' });
  const rtpCapabilities = receiverRtpCapabilities(router.rtpCapabilities, [OPUS, VP8]);
  const audio = await relay.createConsumer({ transportId: recvTransport.id, producerId: audioProducer.id, rtpCapabilities });
  const video = await relay.createConsumer({ transportId: recvTransport.id, producerId: videoProducer.id, rtpCapabilities });
  const receiver = await RecvPeer.create(recvTransport, [audio, video]);
  peers.push(receiver);
  await relay.connectTransport(recvTransport.id, receiver.dtlsParameters);
  await receiver.connected(connectTimeoutMs);
  return {
    router,
    sendTransport,
    recvTransport,
    sender,
    receiver,
    producers: { audio: audioProducer, video: videoProducer },
    consumers: { audio, video },
  };
}
