// What every config slice parses its variables with, and how a failed parse is reported.
import { z } from 'zod';

/** An integer variable with its default and bounds (coerced from the string the environment holds). */
export const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(def);

/** Trimmed; unset and blank both mean "not configured". */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * One line per issue, `VARIABLE: message`. A variable that several slices read (NODE_ENV) fails in
 * each of them with the same line: it is reported once.
 */
export function configError(error: z.ZodError): ConfigError {
  const lines = error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`);
  return new ConfigError([...new Set(lines)]);
}
