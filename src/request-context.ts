// The id of the HTTP request being served, carried through its async calls (AsyncLocalStorage), so
// code that knows nothing of HTTP (the media engine's calls, a worker's death) can log which request
// it was working for.
import { AsyncLocalStorage } from 'node:async_hooks';

const storage = new AsyncLocalStorage<{ requestId: string }>();

/**
 * Runs `fn` with `requestId` as the current request's id.
 * @example app.use((c, next) => runWithRequestId(c.get('requestId'), next))
 */
export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run({ requestId }, fn);
}

/** The id of the request whose work is running now, if any. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}
