import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Paths redacted in every log line: credentials never reach the logs. */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers["x-internal-token"]',
  'req.headers.cookie',
  '*.password',
  '*.old_password',
  '*.new_password',
  '*.token',
  '*.refresh_token',
  '*.internalToken',
  'password',
  'token',
  'refresh_token',
];

/**
 * @example createLogger({ level: 'info' }) // JSON lines on stdout
 * @example createLogger({ level: 'debug', pretty: true }) // `npm run dev`
 */
export function createLogger(options: { level: string; pretty?: boolean; destination?: DestinationStream }): Logger {
  const settings = {
    level: options.level,
    redact: { paths: redactPaths, censor: '[redacted]' },
    ...(options.pretty ? { transport: { target: 'pino-pretty', options: { colorize: true } } } : {}),
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
