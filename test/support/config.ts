// What the configuration tests share: the issues a parse reports, and a production environment that
// passes (each test adds the variables it is about).
import { ConfigError, loadConfig } from '../../src/config/index.js';

/** The `VARIABLE: message` lines loadConfig throws for `env`; none when it parses. */
export function configIssues(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
}

/** NODE_ENV=production with what production requires. */
export const PRODUCTION_ENV = { NODE_ENV: 'production', DATABASE_URL: 'postgres://u@h/db', INTERNAL_TOKEN: 'x'.repeat(32), AUTH_KEY_SECRET: 'k'.repeat(32), MEDIASOUP_ANNOUNCED_IP: '203.0.113.7', AUTH_ISSUER: 'https://chat.example' };
