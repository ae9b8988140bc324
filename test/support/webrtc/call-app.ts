// The app behind a file of werift e2e tests: a real test app, the typed relay client over its
// app.request, and the peers to close after the file.
import { afterAll, beforeAll } from 'vitest';
import { createRelayClient, type RelayClient } from '../../../src/client/relay-client.js';
import { buildTestApp, TEST_INTERNAL_TOKEN, type TestApp } from '../app.js';
import type { Closable } from './call.js';

/**
 * A test app for a file of e2e tests, with the typed relay client over `app.request` and a list of
 * peers closed after the file (before the app).
 * @example
 * const env = useCallApp()
 * it('…', async () => { const call = await openCall(env.relay, { peers: env.peers }) })
 */
export function useCallApp(): { readonly t: TestApp; readonly relay: RelayClient; readonly peers: Closable[] } {
  let t: TestApp | undefined;
  let relay: RelayClient | undefined;
  const peers: Closable[] = [];
  beforeAll(async () => {
    t = await buildTestApp();
    relay = createRelayClient({ baseUrl: 'http://relay.test', token: TEST_INTERNAL_TOKEN, fetch: t.app.request });
  });
  afterAll(async () => {
    for (const peer of peers.splice(0)) await peer.close().catch(() => {});
    await t?.close();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useCallApp: the test app is not built yet (use it inside a test)');
    return value;
  };
  return {
    get t() {
      return ready(t);
    },
    get relay() {
      return ready(relay);
    },
    peers,
  };
}
