// The relay's collectors on the process's registry: resources, workers and drain state, read from
// the media service when scraped.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { MediaService } from './media-service.js';
import { KIND_PLURALS } from './kinds/index.js';

/** @example registerRelayMetrics(metrics.registry, media) */
export function registerRelayMetrics(registry: Registry, media: MediaService): void {
  const registers = [registry];
  new Gauge({
    name: 'media_resources',
    help: 'Open mediasoup resources per worker slot and kind',
    labelNames: ['worker', 'kind'],
    registers,
    async collect() {
      this.reset();
      for (const stats of await media.workerStats()) {
        for (const kind of KIND_PLURALS) this.set({ worker: String(stats.slot), kind }, stats.counts[kind]);
      }
    },
  });
  new Gauge({
    name: 'media_worker_cpu_seconds',
    help: 'CPU time (user + system) used by the current mediasoup worker of each slot, from getResourceUsage()',
    labelNames: ['worker'],
    registers,
    async collect() {
      this.reset();
      for (const stats of await media.workerStats()) {
        this.set({ worker: String(stats.slot) }, (stats.cpuUserMs + stats.cpuSystemMs) / 1000);
      }
    },
  });
  new Gauge({
    name: 'media_worker_max_rss_bytes',
    help: 'Peak resident memory of the current mediasoup worker of each slot, from getResourceUsage()',
    labelNames: ['worker'],
    registers,
    async collect() {
      this.reset();
      for (const stats of await media.workerStats()) this.set({ worker: String(stats.slot) }, stats.maxRssKiB * 1024);
    },
  });
  new Gauge({
    name: 'media_relay_draining',
    help: '1 once a drain has begun (SIGTERM or POST /internal/v1/drain): new routers are refused',
    registers,
    collect() {
      this.set(media.draining ? 1 : 0);
    },
  });
  new Gauge({
    name: 'media_workers_alive',
    help: 'Live mediasoup workers',
    registers,
    collect() {
      this.set(media.aliveWorkerCount());
    },
  });
  new Counter({
    name: 'media_worker_restarts_total',
    help: 'Worker restarts per slot since the service started',
    labelNames: ['worker'],
    registers,
    collect() {
      this.reset();
      for (const [slot, worker] of media.info().workers.entries()) this.inc({ worker: String(slot) }, worker.restarts);
    },
  });
  new Counter({
    name: 'media_worker_deaths_total',
    help: 'Worker deaths per slot since the service started',
    labelNames: ['worker'],
    registers,
    collect() {
      this.reset();
      for (const [slot, worker] of media.info().workers.entries()) this.inc({ worker: String(slot) }, worker.deaths);
    },
  });
}
