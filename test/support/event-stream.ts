// A reader of a relay's event stream (GET /internal/v1/events) in a test: every event from the moment
// it opened, parsed, with the time it arrived, until stop().
import { expect } from 'vitest';

export interface FollowedEvents {
  /** The events read so far, in stream order, each with `receivedAt` (Date.now() when read). */
  events: any[];
  stop: () => void;
}

/** @example const stream = await followEvents(server.url, headers); …; stream.stop() */
export async function followEvents(baseUrl: string, headers: Record<string, string>): Promise<FollowedEvents> {
  const abort = new AbortController();
  const res = await fetch(`${baseUrl}/internal/v1/events`, { headers, signal: abort.signal });
  expect(res.status).toBe(200);
  const events: any[] = [];
  void (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      const frames = buffered.split('\n\n');
      buffered = frames.pop()!;
      for (const frame of frames) {
        const data = frame.split('\n').find((line) => line.startsWith('data: '));
        if (data) events.push({ ...JSON.parse(data.slice(6)), receivedAt: Date.now() });
      }
    }
  })().catch(() => {});
  return { events, stop: () => abort.abort() };
}
