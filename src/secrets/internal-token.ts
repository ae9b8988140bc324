// INTERNAL_TOKEN as configured, or (outside production) one generated once and kept in DATA_DIR/secrets,
// so that a restart (every `npm run dev` reload) keeps the token a shell has exported.
import path from 'node:path';
import type { Config } from '../config/index.js';
import { persistedSecret } from './persisted-secret.js';

/** The file under DATA_DIR/secrets holding the token generated for a development run without INTERNAL_TOKEN. */
export const GENERATED_INTERNAL_TOKEN_FILE = 'internal-token';

export type InternalToken =
  | { value: string; source: 'config' }
  /** `created`: this start generated it (else it was read from `file`). */
  | { value: string; source: 'file'; file: string; created: boolean };

/**
 * The token guarding /internal/*. Production requires INTERNAL_TOKEN (the configuration refuses to
 * start without it); elsewhere an unset one is generated into `${DATA_DIR}/secrets/internal-token` (0600)
 * and reused by every later start.
 * @example const token = await resolveInternalToken(config)
 */
export async function resolveInternalToken(config: Pick<Config, 'internalToken' | 'nodeEnv' | 'secretsDir'>): Promise<InternalToken> {
  if (config.internalToken) return { value: config.internalToken, source: 'config' };
  if (config.nodeEnv === 'production') throw new Error('INTERNAL_TOKEN must be set when NODE_ENV=production');
  const file = path.resolve(config.secretsDir, GENERATED_INTERNAL_TOKEN_FILE);
  const secret = await persistedSecret(file, { minLength: 32 });
  return { value: secret.value, source: 'file', file, created: secret.created };
}

/**
 * What the start-up prints once about a generated token: where it is kept and a line to paste into
 * a shell. Written to the terminal, never through the logger, so it does not end up in log storage.
 */
export function internalTokenNotice(token: InternalToken): string | undefined {
  if (token.source === 'config') return undefined;
  const where = token.created ? `generated one and stored it in ${token.file} (mode 0600); later starts reuse it` : `using the one stored in ${token.file}`;
  return `INTERNAL_TOKEN is not set: ${where}. For the curl calls of the README, run:\nexport INTERNAL_TOKEN=${token.value}\n`;
}
