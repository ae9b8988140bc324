// A real webhook receiver on 127.0.0.1 for the webhook sink's tests: records every request as
// received and answers what the test says.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookBatchSchema, type WebhookBatch } from '../../src/relay/contract/events.js';

export interface Delivery {
  raw: string;
  headers: IncomingHttpHeaders;
  status: number;
}

/** A real receiver on 127.0.0.1: records every request and answers what `answer` says. */
export class Receiver {
  readonly deliveries: Delivery[] = [];
  answer: (n: number) => number | 'hang' = () => 200;
  private server: Server | undefined;
  port = 0;

  async start(port = 0): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const status = this.answer(this.deliveries.length);
        this.deliveries.push({ raw: Buffer.concat(chunks).toString('utf8'), headers: req.headers, status: status === 'hang' ? 0 : status });
        if (status === 'hang') return; // never answers
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  get url() {
    return `http://127.0.0.1:${this.port}/hooks/relay?key=do-not-log-me`;
  }

  /** Batches the receiver accepted (2xx), in order. */
  accepted(): WebhookBatch[] {
    return this.deliveries.filter((d) => d.status >= 200 && d.status < 300).map((d) => webhookBatchSchema.parse(JSON.parse(d.raw)));
  }
}
