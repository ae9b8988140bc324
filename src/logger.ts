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
 * @example createLogger({ level: 'info', destination: createLogOutput().stream }) // the server
 */
export function createLogger(options: { level: string; pretty?: boolean; destination?: DestinationStream }): Logger {
  const settings = {
    level: options.level,
    redact: { paths: redactPaths, censor: '[redacted]' },
    ...(options.pretty ? { transport: { target: 'pino-pretty', options: { colorize: true } } } : {}),
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

/** Log lines waiting for a slow reader of stdout, at most; later ones are dropped until it catches up. */
export const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;

/** The server's log output: stdout, never waited on without a bound. */
export interface LogOutput {
  /** pino's destination: lines go out asynchronously; after a write error or close() they are dropped. */
  readonly stream: DestinationStream;
  /**
   * Waits at most `deadlineMs` for the lines written so far to reach stdout, then closes it. Call it
   * before process.exit: what is still pending then is dropped, never flushed synchronously at exit.
   */
  close(deadlineMs: number): Promise<void>;
  /** Closes at once, dropping what is pending (before a process.exit that cannot wait). */
  abandon(): void;
}

/**
 * stdout through pino's asynchronous destination (sonic-boom), made safe for a reader that goes
 * away or stops reading (a crashed log shipper, a closed terminal, `| tee` killed):
 * - a write error (EPIPE, …) stops the output instead of crashing the process;
 * - a full pipe keeps at most LOG_BUFFER_MAX_BYTES waiting (retried every 100 ms), then drops lines;
 * - close() bounds the final flush. Without it, pino flushes synchronously on 'exit', and its
 *   sonic-boom (4.x) retries EPIPE and EAGAIN there every 100 ms for ever: a process that never
 *   exits, deaf to signals.
 */
export function createLogOutput(fd = 1): LogOutput {
  let closing = false;
  let failed = false;
  const destination = pino.destination({
    dest: fd,
    sync: false,
    maxLength: LOG_BUFFER_MAX_BYTES,
    // A full pipe is retried while the service runs; once it closes, the wait is over.
    retryEAGAIN: () => !closing,
  });
  // pino silences EPIPE itself; any other error would otherwise be thrown as an unhandled 'error'.
  destination.on('error', () => {
    failed = true;
  });
  let destroyed = false;
  const abandon = () => {
    closing = true;
    if (destroyed) return;
    destroyed = true;
    // A destroyed destination is not flushed at exit (pino's exit hook skips it); after end() has
    // closed it, or after pino silenced it on EPIPE, this does nothing.
    destination.destroy();
  };
  return {
    stream: {
      write(line: string) {
        if (!closing && !failed) destination.write(line);
      },
    },
    async close(deadlineMs) {
      if (closing) return;
      closing = true;
      if (!failed) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(done, Math.max(0, deadlineMs));
          destination.once('close', done);
          destination.once('error', done);
          destination.end();
        });
      }
      abandon();
    },
    abandon,
  };
}
