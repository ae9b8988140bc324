// A data channel relayed through the relay between two werift peers: a data producer on one peer's
// send transport, a data consumer on the other's recv transport, 100 messages arriving in order.
import { describe, expect, it } from 'vitest';
import { useCallApp } from '../support/webrtc/call-app.js';
import { DataPeer } from '../support/webrtc/data.js';
import { waitFor } from '../support/webrtc/wait.js';

const MESSAGES = 100;

describe('data channels end to end', () => {
  const env = useCallApp();

  it('relays 100 messages in order from one peer to another', { timeout: 40_000 }, async () => {
    const { relay, peers } = env;
    const router = await relay.createRouter();
    const sendTransport = await relay.createTransport({ routerId: router.id, direction: 'send', enableSctp: true });
    const recvTransport = await relay.createTransport({ routerId: router.id, direction: 'recv', enableSctp: true });
    const sender = await DataPeer.create(sendTransport);
    const receiver = await DataPeer.create(recvTransport);
    peers.push(sender, receiver);
    await relay.connectTransport(sendTransport.id, sender.dtlsParameters);
    await relay.connectTransport(recvTransport.id, receiver.dtlsParameters);
    await Promise.all([sender.connected(), receiver.connected()]);

    const dataProducer = await relay.createDataProducer({ transportId: sendTransport.id, label: 'chat', protocol: 'text' });
    const dataConsumer = await relay.createDataConsumer({ transportId: recvTransport.id, dataProducerId: dataProducer.id });
    expect(dataConsumer).toMatchObject({ label: 'chat', protocol: 'text', sctpStreamParameters: { ordered: true } });

    const received: string[] = [];
    const inbound = receiver.channel('chat', dataConsumer.sctpStreamParameters!, 'text');
    inbound.onMessage.subscribe((message) => received.push(typeof message === 'string' ? message : message.toString('utf8')));
    const outbound = sender.channel('chat', dataProducer.sctpStreamParameters!, 'text');
    await waitFor(() => outbound.readyState === 'open' && inbound.readyState === 'open', { timeoutMs: 10_000, what: 'both data channels open' });

    const sent = Array.from({ length: MESSAGES }, (_, i) => `message ${i} ${'x'.repeat(i)}`);
    for (const text of sent) outbound.send(text);
    await waitFor(() => received.length >= MESSAGES, { timeoutMs: 10_000, what: `${MESSAGES} messages at the receiver (got ${received.length})` });
    expect(received).toEqual(sent);

    // Closing the data producer closes its consumer: nothing more arrives.
    await relay.closeDataProducer(dataProducer.id);
    await expect(relay.closeDataConsumer(dataConsumer.id)).rejects.toMatchObject({ status: 404, details: { resource: 'dataConsumer' } });
    await relay.closeRouter(router.id);
  });
});
