// What every config slice parses its variables with, and how a failed parse is reported.
import { z } from 'zod';

/** An integer variable with its default and bounds (coerced from the string the environment holds). */
export const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(def);

/** Trimmed; unset and blank both mean "not configured". */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/**
 * Comma-separated origins (`https://app.example.com,http://localhost:5173`), trimmed, deduplicated,
 * at most `maxEntries`; each exactly as a browser sends an Origin: scheme, host and port, no path or
 * trailing slash. `also`: entries taken as they are besides origins (CORS_ORIGINS' `*`).
 */
export function originList(maxChars: number, maxEntries: number, also: readonly string[] = []) {
  return z
    .string()
    .max(maxChars)
    .transform((value, ctx): string[] => {
      const entries = [...new Set(value.split(',').map((v) => v.trim()).filter(Boolean))];
      if (entries.length > maxEntries) ctx.addIssue({ code: 'custom', message: `at most ${maxEntries} origins` });
      for (const entry of entries) {
        if (also.includes(entry)) continue;
        const origin = URL.canParse(entry) ? new URL(entry) : undefined;
        if (!origin || !['http:', 'https:'].includes(origin.protocol) || origin.origin !== entry) {
          ctx.addIssue({ code: 'custom', message: `"${entry.slice(0, 100)}" is not an origin such as https://app.example.com (scheme, host and port; no path, no trailing slash)` });
        }
      }
      return entries;
    });
}

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
