// Calls of a cluster test to one node's internal API, as the signaling server makes them (the internal
// token), answered as that node answers: the node itself or the one it carried the call to.
import { expect } from 'vitest';
import { SERVER_TOKEN, type ServerProcess } from './server-process.js';

export const internalHeaders = { 'X-Internal-Token': SERVER_TOKEN, 'Content-Type': 'application/json' };

/** `method /internal/v1<path>` on `server`, the body as JSON; the answer's status and parsed body. */
export async function call(server: ServerProcess, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/internal/v1${path}`, { method, headers: { ...internalHeaders, ...extra }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** The body of a call that must succeed. */
export async function ok(server: ServerProcess, method: string, path: string, body?: unknown): Promise<any> {
  const answer = await call(server, method, path, body);
  expect(answer.status, `${method} ${path} through ${server.url}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
  return answer.body;
}
