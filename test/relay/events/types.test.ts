import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, eventSchemas, relayEventSchema, relayStreamEventSchema, routersOf, webhookBatchSchema } from '../../../src/relay/contract/events.js';

const base = { id: '1000000', time: '2024-01-02 11:04:05' };

describe('event types', () => {
  it('names every type of the contract, the key matching the literal', () => {
    expect(EVENT_TYPES.sort()).toEqual(
      [
        'worker.died', 'worker.restarted', 'router.closed', 'transport.closed', 'transport.ice', 'transport.dtls',
        'producer.closed', 'producer.paused', 'producer.resumed', 'producer.score', 'consumer.closed', 'consumer.paused',
        'consumer.resumed', 'consumer.score', 'consumer.layers', 'dataProducer.closed', 'dataConsumer.closed',
        'router.activeSpeaker', 'router.audioLevels', 'router.silence', 'relay.draining', 'pipeTransport.closed',
        'plainTransport.closed', 'recording.started', 'recording.stopped', 'recording.failed', 'recording.uploaded',
        'recording.recovered', 'whipEndpoint.closed', 'whepEndpoint.closed', 'whip.session.started', 'whip.session.ended',
        'whep.session.started', 'whep.session.ended', 'node.lost',
      ].sort(),
    );
    for (const type of EVENT_TYPES) expect(eventSchemas[type].shape.type.value).toBe(type);
  });

  it('accepts well-formed events and refuses wrong reasons, states and missing appData', () => {
    const consumerClosed = { ...base, type: 'consumer.closed', consumerId: 'c', producerId: 'p', transportId: 't', routerId: 'r', appData: { userId: 7 }, reason: 'producer_closed' };
    expect(relayEventSchema.parse(consumerClosed)).toEqual(consumerClosed);
    expect(relayEventSchema.safeParse({ ...consumerClosed, reason: 'whatever' }).success).toBe(false);
    const { appData: _, ...noAppData } = consumerClosed;
    expect(relayEventSchema.safeParse(noAppData).success).toBe(false);
    expect(relayEventSchema.safeParse({ ...consumerClosed, time: '2024-01-02T03:04:05Z' }).success).toBe(false);
    const dtls = { ...base, type: 'transport.dtls', transportId: 't', routerId: 'r', appData: {}, state: 'failed' };
    expect(relayEventSchema.parse(dtls)).toEqual(dtls);
    expect(relayEventSchema.safeParse({ ...dtls, state: 'completed' }).success).toBe(false);
    const layers = { ...base, type: 'consumer.layers', consumerId: 'c', producerId: 'p', transportId: 't', routerId: 'r', appData: {}, spatialLayer: null, temporalLayer: null };
    expect(relayEventSchema.parse(layers)).toEqual(layers);
    const resync = { ...base, type: 'resync', reason: 'too_old' };
    expect(relayEventSchema.safeParse(resync).success).toBe(false);
    expect(relayStreamEventSchema.parse(resync)).toEqual(resync);
  });

  it('knows which routers an event concerns', () => {
    expect(routersOf({ ...base, type: 'router.silence', routerId: 'r' })).toBe('r');
    expect(routersOf({ ...base, type: 'worker.died', workerPid: 1, routerIds: ['a', 'b'], restartInMs: 0 })).toEqual(['a', 'b']);
    expect(routersOf({ ...base, type: 'relay.draining' })).toBeUndefined();
    expect(routersOf({ ...base, type: 'resync', reason: 'too_old' })).toBeUndefined();
  });

  it('converts to JSON Schema for the OpenAPI document, one branch per type', () => {
    const schema = z.toJSONSchema(relayStreamEventSchema, { io: 'output', target: 'draft-2020-12' }) as { oneOf?: unknown[]; anyOf?: unknown[] };
    expect((schema.oneOf ?? schema.anyOf)?.length).toBe(EVENT_TYPES.length + 1);
    expect(JSON.stringify(z.toJSONSchema(webhookBatchSchema))).toContain('"dropped"');
  });
});
