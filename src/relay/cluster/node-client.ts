// Calls from one node to another: node:http(s) over kept-alive connections, one pool per process, the
// answer read whole (the internal API's answers are small JSON; the event stream is never forwarded).
// Measured with bench/cluster.ts: a read forwarded with fetch() cost 1.54 ms more than on the holder, with
// node:http 0.65 ms (one run each).
import http from 'node:http';
import https from 'node:https';

export interface NodeAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** At most this many connections to each node at once; more calls wait for one. */
const MAX_SOCKETS_PER_NODE = 64;

/**
 * How long an idle connection is kept at most. Node's agent shortens it to the other node's announced
 * keep-alive (`Keep-Alive: timeout=5` by default) less a second, but only when a timeout is set here:
 * without one it keeps the connection until the other node closes it, and a call sent as that close
 * arrives fails with ECONNRESET (answered 503 NODE_UNREACHABLE though the node is up).
 */
const IDLE_CONNECTION_MS = 60_000;

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_NODE, timeout: IDLE_CONNECTION_MS }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_NODE, timeout: IDLE_CONNECTION_MS }),
};

/**
 * Rejects when the node does not answer within `timeoutMs` (the connection refused, reset, or silent),
 * or when `signal` aborts.
 * @example const answer = await callNode('http://node-b:3001', 'GET', '/internal/v1/routers/r1', headers, undefined, 1_500)
 */
export function callNode(base: string, method: string, path: string, headers: Record<string, string>, body: Buffer | undefined, timeoutMs: number, signal?: AbortSignal): Promise<NodeAnswer> {
  const url = new URL(path, base);
  const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
  const request = protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const options = { method, headers: body ? { ...headers, 'content-length': String(body.length) } : headers, agent: agents[protocol], timeout: timeoutMs, ...(signal ? { signal } : {}) };
    const req = request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    // `timeout` is the socket's idle time: also a node that accepts and then says nothing.
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Whether the node's process answers at all: GET /healthz on a connection of its own (not one queued
 * behind the pool's calls to that node), answered within `timeoutMs`. A process that is stopped or
 * hung keeps accepting connections (the kernel does) and never answers.
 * @example if (!(await nodeAnswers('http://node-b:3001', 1_000))) …
 */
export async function nodeAnswers(base: string, timeoutMs: number): Promise<boolean> {
  const url = new URL('/healthz', base);
  const request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', agent: false, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
      res.on('error', () => resolve(false));
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}
