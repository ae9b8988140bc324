// Polling with a deadline: every wait in the media tests ends, with a message naming what never happened.
import { setTimeout as sleep } from 'node:timers/promises';

export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  { timeoutMs, intervalMs = 20, what }: { timeoutMs: number; intervalMs?: number; what: string },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export { sleep };
