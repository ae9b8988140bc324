// A real HTTP server (127.0.0.1, port 0) around the event stream sub-app behind the real token guard,
// and a reader of its SSE responses.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createParser } from 'eventsource-parser';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { afterEach } from 'vitest';
import { createEventBus, type EventBus, type EventBusOptions } from '../../src/events/bus.js';
import { createEventStreams, type EventStreamOptions, type EventStreams } from '../../src/events/sse.js';
import { internalToken } from '../../src/http/internal-token.js';

export const TOKEN = 'events-test-token-0123456789abcdef0123';

export interface StreamServer {
  bus: EventBus;
  streams: EventStreams;
  server: Server;
  url: string;
  /** The server's open connections now. */
  connections(this: void): Promise<number>;
  close(): Promise<void>;
}

export interface AppServer {
  url: string;
  close(): Promise<void>;
}

/** The whole test app on a real HTTP server (127.0.0.1, port 0), for its event stream over real HTTP. */
export async function serveApp(t: { app: { fetch: (request: Request) => Response | Promise<Response> } }): Promise<AppServer> {
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s as Server));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export async function startStreamServer(
  busOptions: EventBusOptions = {},
  streamOptions: EventStreamOptions = {},
  bus = createEventBus(busOptions),
  port = 0,
  prebuilt?: EventStreams,
): Promise<StreamServer> {
  const streams = prebuilt ?? createEventStreams(bus, streamOptions);
  const app = new Hono();
  app.use('/internal/*', internalToken({ token: TOKEN }));
  app.route('/internal/v1', streams.routes);
  app.onError((error, c) => {
    if (error instanceof HTTPException && error.status === 401) return c.json({ code: 'UNAUTHORIZED', message: 'missing or invalid internal token' }, 401);
    return c.json({ code: 'INTERNAL_ERROR', message: 'internal error' }, 500);
  });
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port }, () => resolve(s as Server));
  });
  const address = server.address() as AddressInfo;
  return {
    bus,
    streams,
    server,
    url: `http://127.0.0.1:${address.port}`,
    connections: () => new Promise((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n)))),
    async close() {
      streams.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

export interface SseFrame {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/** Reads one SSE response: frames and comments as they come, with bounded waits. */
export class SseReader {
  readonly frames: SseFrame[] = [];
  readonly comments: string[] = [];
  done = false;
  private wake: (() => void) | undefined;

  constructor(readonly response: Response) {
    const parser = createParser({
      onEvent: (e) => this.push(() => this.frames.push({ id: e.id, event: e.event, data: e.data })),
      onComment: (comment) => this.push(() => this.comments.push(comment.trim())),
    });
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      } catch {
        // aborted by the test or cut by the server
      }
      this.push(() => (this.done = true));
    })();
  }

  private push(change: () => void) {
    change();
    this.wake?.();
  }

  /** Waits until `predicate` holds (checked on every frame), at most `timeoutMs`. */
  async until(predicate: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (this.done && !predicate()) throw new Error(`stream ended before ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what} (${this.frames.length} frames)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  async frameCount(n: number, timeoutMs?: number): Promise<SseFrame[]> {
    await this.until(() => this.frames.length >= n, timeoutMs, `${n} frames`);
    return this.frames.slice(0, n);
  }

  events(): Array<Record<string, unknown>> {
    return this.frames.map((f) => JSON.parse(f.data) as Record<string, unknown>);
  }
}

export async function openStream(
  url: string,
  options: { query?: string; lastEventId?: string; token?: string; signal?: AbortSignal } = {},
): Promise<{ response: Response; reader: SseReader | undefined }> {
  const headers: Record<string, string> = { 'X-Internal-Token': options.token ?? TOKEN, Accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['Last-Event-ID'] = options.lastEventId;
  const response = await fetch(`${url}/internal/v1/events${options.query ?? ''}`, { headers, ...(options.signal ? { signal: options.signal } : {}) });
  return { response, reader: response.ok ? new SseReader(response) : undefined };
}

/** Polls `check` every 10 ms until true, at most `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Stream servers and abort controllers for the tests of one file: after each test the controllers
 * abort and the servers close (a server a test closed itself is not closed twice).
 * @example const { start, abortable } = useStreamServers()
 */
export function useStreamServers() {
  const servers: StreamServer[] = [];
  const controllers: AbortController[] = [];
  afterEach(async () => {
    for (const c of controllers.splice(0)) c.abort();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return {
    start: async (...args: Parameters<typeof startStreamServer>): Promise<StreamServer> => {
      const s = await startStreamServer(...args);
      let closing: Promise<void> | undefined;
      const close = s.close.bind(s);
      const once = { ...s, close: () => (closing ??= close()) };
      servers.push(once);
      return once;
    },
    abortable: (): AbortController => {
      const controller = new AbortController();
      controllers.push(controller);
      return controller;
    },
  };
}
