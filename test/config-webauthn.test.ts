// The passkey slice of the configuration (issue 31): defaults for the local demo outside production,
// off in production until WEBAUTHN_RP_ID is set, and every bad value stops the service naming it.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { configIssues, PRODUCTION_ENV } from './support/config.js';

describe('loadConfig: passkeys (WEBAUTHN_*)', () => {
  it('outside production: localhost and http://localhost:<PORT> unless set', () => {
    expect(loadConfig({ PORT: '3100' }).webauthn).toEqual({ rpId: 'localhost', rpName: 'chat-backend', origins: ['http://localhost:3100'] });
    expect(loadConfig({ WEBAUTHN_ORIGINS: 'http://localhost:8080, http://localhost:8080,http://app.localhost:5173', WEBAUTHN_RP_NAME: ' Chat ' }).webauthn).toEqual({
      rpId: 'localhost',
      rpName: 'Chat',
      origins: ['http://localhost:8080', 'http://app.localhost:5173'],
    });
    expect(loadConfig({ WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'https://chat.example.com,https://example.com:8443' }).webauthn?.origins).toEqual(['https://chat.example.com', 'https://example.com:8443']);
  });

  it('production: off without WEBAUTHN_RP_ID; with it, WEBAUTHN_ORIGINS is required and https only', () => {
    expect(loadConfig(PRODUCTION_ENV).webauthn).toBeUndefined();
    expect(loadConfig({ ...PRODUCTION_ENV, WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'https://chat.example.com' }).webauthn).toEqual({ rpId: 'example.com', rpName: 'chat-backend', origins: ['https://chat.example.com'] });
    expect(configIssues({ ...PRODUCTION_ENV, WEBAUTHN_RP_ID: 'example.com' })).toEqual([expect.stringMatching(/^WEBAUTHN_ORIGINS: must be set/)]);
    expect(configIssues({ ...PRODUCTION_ENV, WEBAUTHN_ORIGINS: 'https://chat.example.com' })).toEqual([expect.stringMatching(/^WEBAUTHN_RP_ID: must be set/)]);
    expect(configIssues({ ...PRODUCTION_ENV, WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: 'http://localhost:3000' })).toEqual([expect.stringMatching(/^WEBAUTHN_ORIGINS: .*must be https/)]);
  });

  it('refuses bad values, naming the variable', () => {
    for (const [name, env] of [
      ['WEBAUTHN_RP_ID', { WEBAUTHN_RP_ID: 'https://example.com', WEBAUTHN_ORIGINS: 'https://example.com' }],
      ['WEBAUTHN_RP_ID', { WEBAUTHN_RP_ID: 'Example.com', WEBAUTHN_ORIGINS: 'https://example.com' }],
      ['WEBAUTHN_RP_ID', { WEBAUTHN_RP_ID: '127.0.0.1', WEBAUTHN_ORIGINS: 'http://127.0.0.1:3000' }],
      ['WEBAUTHN_RP_ID', { WEBAUTHN_RP_ID: 'a'.repeat(300) }],
      ['WEBAUTHN_RP_NAME', { WEBAUTHN_RP_NAME: 'n'.repeat(65) }],
      ['WEBAUTHN_ORIGINS', { WEBAUTHN_ORIGINS: 'http://localhost:3000/' }],
      ['WEBAUTHN_ORIGINS', { WEBAUTHN_ORIGINS: 'localhost:3000' }],
      ['WEBAUTHN_ORIGINS', { WEBAUTHN_ORIGINS: 'http://evil.example:3000' }],
      ['WEBAUTHN_ORIGINS', { WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'http://chat.example.com' }],
      ['WEBAUTHN_ORIGINS', { WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'https://notexample.com' }],
      ['WEBAUTHN_ORIGINS', { WEBAUTHN_RP_ID: 'example.com' }],
      ['WEBAUTHN_ORIGINS', { WEBAUTHN_ORIGINS: Array.from({ length: 21 }, (_, i) => `http://localhost:${3000 + i}`).join(',') }],
    ] as const) {
      const found = configIssues(env);
      expect(found.length, JSON.stringify(env).slice(0, 120)).toBeGreaterThan(0);
      for (const issue of found) expect(issue.startsWith(`${name}: `), issue).toBe(true);
    }
  });
});
