import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_EVENT_TYPES, accountEventSchema } from '../../src/accounts/events.js';
import { EVENT_TYPES, relayStreamEventSchema } from '../../src/relay/contract/events.js';

const doc = readFileSync(new URL('../../docs/events.md', import.meta.url), 'utf8');

describe('docs/events.md', () => {
  it('shows a valid example of every event type', () => {
    const examples = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.trim().split('\n'));
    const types = new Set<string>();
    for (const line of examples) {
      const event = JSON.parse(line) as { type: string };
      const parsed = event.type.startsWith('auth.') ? accountEventSchema.safeParse(event) : relayStreamEventSchema.safeParse(event);
      expect(parsed.error?.issues ?? [], line.slice(0, 80)).toEqual([]);
      types.add(parsed.data!.type);
    }
    expect([...types].sort()).toEqual([...EVENT_TYPES, ...ACCOUNT_EVENT_TYPES, 'resync'].sort());
  });

  it('has a heading for every event type', () => {
    for (const type of [...EVENT_TYPES, ...ACCOUNT_EVENT_TYPES]) expect(doc).toMatch(new RegExp(`^### .*${type.replace('.', '\\.')}`, 'm'));
  });

  it('names every event metric the relay registers', () => {
    const source = readFileSync(new URL('../../src/events/metrics.ts', import.meta.url), 'utf8');
    const names = [...source.matchAll(/'(media_events?_[a-z_]+)'/g)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThanOrEqual(9);
    for (const name of names) expect(doc).toContain(name);
  });
});
