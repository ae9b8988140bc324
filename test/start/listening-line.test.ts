// Issue 27 #12: the start-up line a newcomer reads gives a clickable URL and the docs link.
import { afterAll, expect, it } from 'vitest';
import { startServer, type ServerProcess } from '../support/server-process.js';

let server: ServerProcess | undefined;
afterAll(() => server?.stop());

it('logs "listening on http://…" with the docs link', { timeout: 90_000 }, async () => {
  server = await startServer({ LOG_LEVEL: 'info' }, { timeoutMs: 90_000 });
  const line = server.logLines().find((l) => l.listener === 'main');
  expect(line?.msg).toBe(`listening on ${server.url} (docs: ${server.url}/docs)`);
  expect(line).toMatchObject({ url: server.url, docs: `${server.url}/docs` });
  expect((await fetch(line!.docs as string)).status).toBe(200);
});
