// The typed client's wire types (generated into src/client/wire.gen.ts by scripts/client-types.ts, what
// the package's declarations carry instead of the relay's zod contract) equal the contract: each body to the z.input of its schema, each
// answer and event to the z.output of its own. Checked by the type checker (`npm run typecheck`:
// expectTypeOf fails to compile on any difference); the run below checks the runtime tables.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { RELAY_ERROR_CODES as CLIENT_ERROR_CODES } from '../../src/client/errors.js';
import type { RelayClient } from '../../src/client/relay-client.js';
import type * as Wire from '../../src/client/types.js';
import type * as common from '../../src/relay/contract/common.js';
import type * as consumers from '../../src/relay/kinds/consumers/contract.js';
import type * as controls from '../../src/relay/kinds/controls/contract.js';
import type * as data from '../../src/relay/kinds/data/contract.js';
import type * as ice from '../../src/relay/contract/ice-servers.js';
import type * as accountEvents from '../../src/accounts/events.js';
import type * as moderation from '../../src/accounts/moderation/contract.js';
import type * as tokens from '../../src/accounts/sessions/tokens-contract.js';
import type * as plain from '../../src/relay/kinds/plain/contract.js';
import type * as recordings from '../../src/relay/contract/recordings.js';
import { RELAY_ERROR_CODES, type RelayErrorCode } from '../../src/relay/contract/errors.js';
import type * as events from '../../src/relay/contract/events.js';
import type * as pipes from '../../src/relay/kinds/pipes/contract.js';
import type * as producers from '../../src/relay/kinds/producers/contract.js';
import type * as routers from '../../src/relay/kinds/routers/contract.js';
import type { FAMILIES } from '../../src/relay/kinds/index.js';
import type * as service from '../../src/relay/contract/service.js';
import type * as transports from '../../src/relay/kinds/transports/contract.js';

type In<S extends z.ZodType> = z.input<S>;
type Out<S extends z.ZodType> = z.output<S>;
/** A union of events as one object: each event type to its event. */
type ByType<E extends { type: string }> = { [T in E['type']]: Extract<E, { type: T }> };
type ResultOf<M extends keyof RelayClient> = RelayClient[M] extends (...args: never[]) => Promise<infer R> ? R : never;

describe('the relay client wire types', () => {
  it('equal the contract: bodies its z.input, answers its z.output', () => {
    expectTypeOf<Wire.CreateRouterBody>().toEqualTypeOf<In<typeof routers.createRouterBody>>();
    expectTypeOf<Wire.CreateTransportBody>().toEqualTypeOf<In<typeof transports.createTransportBody>>();
    expectTypeOf<{ dtlsParameters: Wire.DtlsParameters }>().toEqualTypeOf<In<typeof transports.connectTransportBody>>();
    expectTypeOf<Wire.CreateProducerBody>().toEqualTypeOf<In<typeof producers.createProducerBody>>();
    expectTypeOf<Wire.CreateConsumerBody>().toEqualTypeOf<In<typeof consumers.createConsumerBody>>();
    expectTypeOf<Wire.PreferredLayersBody>().toEqualTypeOf<In<typeof controls.preferredLayersBody>>();
    expectTypeOf<{ priority: number }>().toEqualTypeOf<In<typeof controls.priorityBody>>();
    expectTypeOf<{ bitrate: number }>().toEqualTypeOf<In<typeof controls.maxIncomingBitrateBody>>();
    expectTypeOf<Wire.CreateDataProducerBody>().toEqualTypeOf<In<typeof data.createDataProducerBody>>();
    expectTypeOf<Wire.CreateDataConsumerBody>().toEqualTypeOf<In<typeof data.createDataConsumerBody>>();
    expectTypeOf<Wire.CreatePipeTransportBody>().toEqualTypeOf<In<typeof pipes.createPipeTransportBody>>();
    expectTypeOf<Wire.CreatePlainTransportBody>().toEqualTypeOf<In<typeof plain.createPlainTransportBody>>();
    expectTypeOf<Wire.ConnectPlainTransportBody>().toEqualTypeOf<In<typeof plain.connectPlainTransportBody>>();
    expectTypeOf<ResultOf<'createPlainTransport'>>().toEqualTypeOf<Out<typeof plain.plainTransportSchema>>();
    expectTypeOf<Wire.CreateRecordingBody>().toEqualTypeOf<In<typeof recordings.createRecordingBody>>();
    expectTypeOf<ResultOf<'createRecording'>>().toEqualTypeOf<Out<typeof recordings.recordingSchema>>();
    expectTypeOf<ResultOf<'listRecordings'>>().toEqualTypeOf<Out<typeof recordings.recordingListSchema>>();
    expectTypeOf<Wire.Introspection>().toEqualTypeOf<Out<typeof tokens.introspectionAnswer>>();
    expectTypeOf<Wire.BanBody>().toEqualTypeOf<In<typeof moderation.banBody>>();
    expectTypeOf<Wire.OperatorUser>().toEqualTypeOf<Out<typeof moderation.operatorUser>>();
    expectTypeOf<Wire.OperatorUserDetail>().toEqualTypeOf<Out<typeof moderation.operatorUserDetail>>();
    expectTypeOf<Wire.MfaCleared>().toEqualTypeOf<Out<typeof moderation.mfaCleared>>();
    expectTypeOf<Wire.UsersPage>().toEqualTypeOf<Out<typeof moderation.usersPage>>();
    expectTypeOf<ByType<Wire.AccountEvent>>().toEqualTypeOf<ByType<accountEvents.AccountEvent>>();
    expectTypeOf<Wire.IceServersBody>().toEqualTypeOf<In<typeof ice.iceServersBody>>();
    expectTypeOf<ResultOf<'iceServers'>>().toEqualTypeOf<Out<typeof ice.iceServersSchema>>();
    expectTypeOf<Wire.ConnectPipeTransportBody>().toEqualTypeOf<In<typeof pipes.connectPipeTransportBody>>();
    expectTypeOf<{ producerId: string }>().toEqualTypeOf<In<typeof pipes.createPipeConsumerBody>>();
    expectTypeOf<Wire.CreatePipeProducerBody>().toEqualTypeOf<In<typeof pipes.createPipeProducerBody>>();

    expectTypeOf<Wire.RelayInfo>().toEqualTypeOf<Out<typeof service.infoSchema>>();
    expectTypeOf<Wire.DrainState>().toEqualTypeOf<Out<typeof service.drainSchema>>();
    expectTypeOf<Wire.Router>().toEqualTypeOf<Out<typeof routers.routerSchema>>();
    expectTypeOf<Wire.RouterList>().toEqualTypeOf<Out<typeof routers.routerListSchema>>();
    expectTypeOf<Wire.RouterState>().toEqualTypeOf<Out<typeof FAMILIES.routers.contract.routerStateSchema>>();
    expectTypeOf<Wire.Transport>().toEqualTypeOf<Out<typeof transports.transportSchema>>();
    expectTypeOf<Wire.Producer>().toEqualTypeOf<Out<typeof producers.producerSchema>>();
    expectTypeOf<Wire.Consumer>().toEqualTypeOf<Out<typeof consumers.consumerSchema>>();
    expectTypeOf<Wire.ConsumerState>().toEqualTypeOf<Out<typeof consumers.consumerStateSchema>>();
    expectTypeOf<Wire.ConsumerLayers>().toEqualTypeOf<Out<typeof controls.consumerLayersSchema>>();
    expectTypeOf<Wire.ConsumerPriority>().toEqualTypeOf<Out<typeof controls.consumerPrioritySchema>>();
    expectTypeOf<Wire.IceRestart>().toEqualTypeOf<Out<typeof controls.iceRestartSchema>>();
    expectTypeOf<Wire.Stats>().toEqualTypeOf<Out<typeof controls.statsSchema>>();
    expectTypeOf<Wire.DataProducer>().toEqualTypeOf<Out<typeof data.dataProducerSchema>>();
    expectTypeOf<Wire.DataConsumer>().toEqualTypeOf<Out<typeof data.dataConsumerSchema>>();
    expectTypeOf<Wire.PipeTransport>().toEqualTypeOf<Out<typeof pipes.pipeTransportSchema>>();
    expectTypeOf<Wire.PipeConsumer>().toEqualTypeOf<Out<typeof pipes.pipeConsumerSchema>>();
    expectTypeOf<Wire.PipeProducer>().toEqualTypeOf<Out<typeof pipes.pipeProducerSchema>>();
    expectTypeOf<Wire.Connected>().toEqualTypeOf<Out<typeof common.connectedSchema>>();

    // Unions compared member by member (expectTypeOf's deep comparison does not take unions apart).
    expectTypeOf<Wire.RelayEventType>().toEqualTypeOf<events.RelayEventType>();
    expectTypeOf<Wire.RelayStreamEvent['type']>().toEqualTypeOf<events.RelayStreamEvent['type']>();
    expectTypeOf<ByType<Wire.RelayStreamEvent>>().toEqualTypeOf<ByType<events.RelayStreamEvent>>();
    expectTypeOf<Omit<Wire.WebhookBatch, 'events'>>().toEqualTypeOf<Omit<events.WebhookBatch, 'events'>>();
    expectTypeOf<Wire.WebhookBatch['events']>().toEqualTypeOf<Wire.RelayEvent[]>();
    expectTypeOf<events.WebhookBatch['events']>().toEqualTypeOf<events.RelayEvent[]>();
    expectTypeOf<Wire.RelayErrorCode>().toEqualTypeOf<RelayErrorCode>();
  });

  it("the client's methods answer those types", () => {
    expectTypeOf<ResultOf<'createRouter'>>().toEqualTypeOf<Out<typeof routers.routerSchema>>();
    expectTypeOf<ResultOf<'createTransport'>>().toEqualTypeOf<Out<typeof transports.transportSchema>>();
    expectTypeOf<ResultOf<'connectTransport'>>().toEqualTypeOf<Out<typeof common.connectedSchema>>();
    expectTypeOf<ResultOf<'pauseProducer'>>().toEqualTypeOf<{ id: string; paused: boolean }>();
  });

  it('the error codes the client knows are the relay table', () => {
    expect([...CLIENT_ERROR_CODES]).toEqual(RELAY_ERROR_CODES);
  });
});
