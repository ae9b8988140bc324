// What mediasoup itself holds, seen through its observer API, to compare with the relay's registry:
// nothing half-created may stay registered, nothing registered may be closed in the engine.
import * as mediasoup from 'mediasoup';
import type { types as ms } from 'mediasoup';

export interface EngineCounts {
  routers: number;
  transports: number;
  producers: number;
  consumers: number;
  dataProducers: number;
  dataConsumers: number;
}

export class EngineWatch {
  readonly workers: ms.Worker[] = [];
  readonly routers: ms.Router[] = [];
  readonly transports: ms.Transport[] = [];
  readonly producers: ms.Producer[] = [];
  readonly consumers: ms.Consumer[] = [];
  readonly dataProducers: ms.DataProducer[] = [];
  readonly dataConsumers: ms.DataConsumer[] = [];
  /** Workers that died (not closed): the pid of each, in order. */
  readonly deaths: number[] = [];

  /** Call before the app (and its workers) is built. */
  static start(): EngineWatch {
    const watch = new EngineWatch();
    mediasoup.observer.on('newworker', (worker: ms.Worker) => watch.adopt(worker));
    return watch;
  }

  private adopt(worker: ms.Worker): void {
    this.workers.push(worker);
    worker.on('died', () => void this.deaths.push(worker.pid));
    worker.observer.on('newrouter', (router: ms.Router) => {
      this.routers.push(router);
      router.observer.on('newtransport', (transport: ms.Transport) => {
        this.transports.push(transport);
        transport.observer.on('newproducer', (producer: ms.Producer) => void this.producers.push(producer));
        transport.observer.on('newconsumer', (consumer: ms.Consumer) => void this.consumers.push(consumer));
        transport.observer.on('newdataproducer', (dataProducer: ms.DataProducer) => void this.dataProducers.push(dataProducer));
        transport.observer.on('newdataconsumer', (dataConsumer: ms.DataConsumer) => void this.dataConsumers.push(dataConsumer));
      });
    });
  }

  /** Objects the engine still has open. */
  open(): EngineCounts {
    const live = (xs: { closed: boolean }[]) => xs.filter((x) => !x.closed).length;
    return {
      routers: live(this.routers),
      transports: live(this.transports),
      producers: live(this.producers),
      consumers: live(this.consumers),
      dataProducers: live(this.dataProducers),
      dataConsumers: live(this.dataConsumers),
    };
  }

  created(): EngineCounts {
    return {
      routers: this.routers.length,
      transports: this.transports.length,
      producers: this.producers.length,
      consumers: this.consumers.length,
      dataProducers: this.dataProducers.length,
      dataConsumers: this.dataConsumers.length,
    };
  }
}
