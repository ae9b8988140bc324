import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { configIssues, PRODUCTION_ENV } from './support/config.js';

describe('loadConfig: relay events', () => {
  it('applies the documented defaults, no webhook unless its URL is set', () => {
    expect(loadConfig({}).events).toEqual({ bufferSize: 10_000, subscriberMaxQueued: 1_000, heartbeatS: 15, maxStreams: 50, retentionMs: 72 * 3_600_000, webhook: undefined });
    expect(loadConfig({ EVENTS_RETENTION_HOURS: '0.01' }).events.retentionMs).toBe(36_000);
    const config = loadConfig({ EVENTS_WEBHOOK_URL: 'https://hooks.example.com/relay?key=k', EVENTS_WEBHOOK_SECRET: 'short-is-fine-outside-production', EVENTS_WEBHOOK_BATCH_MAX: '10', EVENTS_WEBHOOK_QUEUE_MAX: '500' });
    expect(config.events.webhook).toEqual({ url: 'https://hooks.example.com/relay?key=k', secret: 'short-is-fine-outside-production', batchMax: 10, queueMax: 500, giveUpMs: 86_400_000 });
  });

  it('bounds every variable', () => {
    for (const [name, value] of [
      ['EVENTS_BUFFER_SIZE', '99'],
      ['EVENTS_BUFFER_SIZE', '1000001'],
      ['EVENTS_SUBSCRIBER_MAX_QUEUED', '9'],
      ['EVENTS_HEARTBEAT_S', '0'],
      ['EVENTS_HEARTBEAT_S', '301'],
      ['EVENTS_MAX_STREAMS', '0'],
      ['EVENTS_MAX_STREAMS', 'many'],
      ['EVENTS_WEBHOOK_BATCH_MAX', '1001'],
      ['EVENTS_WEBHOOK_QUEUE_MAX', '0'],
      ['EVENTS_WEBHOOK_GIVE_UP_S', '0'],
      ['EVENTS_WEBHOOK_GIVE_UP_S', '2592001'],
      ['EVENTS_RETENTION_HOURS', '0'],
      ['EVENTS_RETENTION_HOURS', 'long'],
    ] as const) {
      expect(configIssues({ [name]: value }).join('\n'), `${name}=${value}`).toContain(name);
    }
    expect(configIssues({ EVENTS_BUFFER_SIZE: '500', EVENTS_SUBSCRIBER_MAX_QUEUED: '600' })).toEqual([expect.stringContaining('EVENTS_SUBSCRIBER_MAX_QUEUED: must be <= EVENTS_BUFFER_SIZE')]);
  });

  it('takes only http(s) webhook URLs of bounded length, and needs a secret with one', () => {
    for (const url of ['ftp://h/x', 'javascript:alert(1)', 'not a url', `https://h/${'a'.repeat(2100)}`]) {
      expect(configIssues({ EVENTS_WEBHOOK_URL: url, EVENTS_WEBHOOK_SECRET: 's' }).join('\n'), url.slice(0, 30)).toContain('EVENTS_WEBHOOK_URL');
    }
    expect(configIssues({ EVENTS_WEBHOOK_URL: 'http://10.0.0.2:8080/hook' })).toEqual([expect.stringContaining('EVENTS_WEBHOOK_SECRET: must be set')]);
    expect(loadConfig({ EVENTS_WEBHOOK_URL: 'http://[::1]:8080/hook', EVENTS_WEBHOOK_SECRET: 's' }).events.webhook?.url).toBe('http://[::1]:8080/hook');
  });

  it('requires a webhook secret of at least 32 characters in production', () => {
    expect(configIssues({ ...PRODUCTION_ENV, EVENTS_WEBHOOK_URL: 'https://h/x', EVENTS_WEBHOOK_SECRET: 'y'.repeat(31) })).toEqual([
      expect.stringContaining('EVENTS_WEBHOOK_SECRET: must be at least 32 characters'),
    ]);
    expect(loadConfig({ ...PRODUCTION_ENV, EVENTS_WEBHOOK_URL: 'https://h/x', EVENTS_WEBHOOK_SECRET: 'y'.repeat(32) }).events.webhook?.secret).toHaveLength(32);
  });
});
