// The relay's event bus and its sinks (src/relay/events/): replay buffer, streams and the webhook.
import { z } from 'zod';
import { int, optionalString } from './env.js';
import { serverVariables } from './server.js';

export const eventsVariables = {
  EVENTS_BUFFER_SIZE: int(10_000, 100, 1_000_000),
  EVENTS_SUBSCRIBER_MAX_QUEUED: int(1_000, 10, 1_000_000),
  EVENTS_HEARTBEAT_S: int(15, 1, 300),
  EVENTS_MAX_STREAMS: int(50, 1, 10_000),
  EVENTS_WEBHOOK_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).max(2048).optional()),
  EVENTS_WEBHOOK_SECRET: optionalString.pipe(z.string().max(1024).optional()),
  EVENTS_WEBHOOK_BATCH_MAX: int(100, 1, 1_000),
  EVENTS_WEBHOOK_QUEUE_MAX: int(10_000, 1, 1_000_000),
  EVENTS_WEBHOOK_GIVE_UP_S: int(86_400, 1, 2_592_000),
  // Fractions accepted (0.01: 36 s); at most ten years.
  EVENTS_RETENTION_HOURS: z.coerce.number().min(0.001).max(87_600).default(72),
};

// NODE_ENV belongs to the server slice; read here because production wants a long webhook secret.
export const eventsConfig = z
  .object({ NODE_ENV: serverVariables.NODE_ENV, ...eventsVariables })
  .superRefine((env, ctx) => {
    if (env.EVENTS_SUBSCRIBER_MAX_QUEUED > env.EVENTS_BUFFER_SIZE) {
      ctx.addIssue({
        code: 'custom',
        path: ['EVENTS_SUBSCRIBER_MAX_QUEUED'],
        message: 'must be <= EVENTS_BUFFER_SIZE (a stream resumes from the buffer after it is cut off)',
      });
    }
    if (env.EVENTS_WEBHOOK_URL && !env.EVENTS_WEBHOOK_SECRET) {
      ctx.addIssue({ code: 'custom', path: ['EVENTS_WEBHOOK_SECRET'], message: 'must be set when EVENTS_WEBHOOK_URL is set (deliveries are signed)' });
    }
    if (env.NODE_ENV === 'production' && env.EVENTS_WEBHOOK_URL && env.EVENTS_WEBHOOK_SECRET && env.EVENTS_WEBHOOK_SECRET.length < 32) {
      ctx.addIssue({ code: 'custom', path: ['EVENTS_WEBHOOK_SECRET'], message: 'must be at least 32 characters when NODE_ENV=production' });
    }
  })
  .transform((env) => ({
    /** The relay's event bus and its sinks (src/relay/events/). */
    events: {
      bufferSize: env.EVENTS_BUFFER_SIZE,
      subscriberMaxQueued: env.EVENTS_SUBSCRIBER_MAX_QUEUED,
      heartbeatS: env.EVENTS_HEARTBEAT_S,
      maxStreams: env.EVENTS_MAX_STREAMS,
      /** How long the event log keeps an event (and at least until the webhook delivered it). */
      retentionMs: Math.round(env.EVENTS_RETENTION_HOURS * 3_600_000),
      /** Undefined unless EVENTS_WEBHOOK_URL is set. */
      webhook:
        env.EVENTS_WEBHOOK_URL && env.EVENTS_WEBHOOK_SECRET
          ? { url: env.EVENTS_WEBHOOK_URL, secret: env.EVENTS_WEBHOOK_SECRET, batchMax: env.EVENTS_WEBHOOK_BATCH_MAX, queueMax: env.EVENTS_WEBHOOK_QUEUE_MAX, giveUpMs: env.EVENTS_WEBHOOK_GIVE_UP_S * 1000 }
          : undefined,
    },
  }));
