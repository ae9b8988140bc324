// The relay's events for a signaling server: a self-resuming iterator over GET /internal/v1/events,
// and the check of a webhook delivery's signature.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createParser } from 'eventsource-parser';
import { signStandardWebhook, standardWebhooksKey } from '../events/webhook-key.js';
import { RelayClientError } from './errors.js';
import type { RelayClientOptions, RelayStreamEvent, WebhookBatch } from './types.js';

export type { RelayEvent, RelayEventType, RelayStreamEvent, WebhookBatch } from './types.js';

export interface EventsOptions {
  /** Only events about these routers (relay-wide events such as relay.draining and resync always come). */
  routerIds?: readonly string[];
  /** Resume after this id (e.g. one persisted before a restart of the signaling server). */
  lastEventId?: string;
  /**
   * Other instances of the relay sharing its database (their base URLs, as `baseUrl`): after a
   * failed or dropped connection the next attempt goes to the next one in turn, resuming with the
   * last id, which every instance knows (durable events are replayed from the event log, no resync).
   */
  failoverBaseUrls?: readonly string[];
  /** Ends the iteration (the loop then simply finishes). */
  signal?: AbortSignal;
  /**
   * Reconnect when nothing at all (not even the relay's heartbeat comment, every 15 s by default)
   * arrived for this long: a connection can die without a close reaching us. Default 60 s.
   */
  idleTimeoutMs?: number;
}

export interface EventsIterator extends AsyncIterableIterator<RelayStreamEvent> {
  /** The id to resume from: the last event received, or where the stream said it joined. */
  readonly lastEventId: string | undefined;
}

export interface ReconnectOptions {
  /** First wait before reconnecting after a failure (default 250 ms); doubles up to maxMs. */
  minMs?: number;
  /** Longest wait between attempts (default 10 s). */
  maxMs?: number;
}

/** Answers that retrying cannot fix: thrown from the iterator instead of reconnecting. */
const FATAL_STATUSES = new Set([400, 401, 403, 404, 405]);
const MAX_EVENT_BYTES = 4 * 1024 * 1024;

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}

async function errorOf(response: Response): Promise<RelayClientError> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown; details?: unknown };
    if (typeof body.code === 'string') {
      return new RelayClientError(
        response.status,
        body.code as RelayClientError['code'],
        typeof body.message === 'string' ? body.message : body.code,
        body.details && typeof body.details === 'object' ? (body.details as Record<string, unknown>) : undefined,
      );
    }
  } catch {
    // not JSON
  }
  return new RelayClientError(response.status, 'INTERNAL_ERROR', `relay answered HTTP ${response.status} without an error object`, { body: text.slice(0, 500) });
}

function isEvent(value: unknown): value is RelayStreamEvent {
  return typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string' && typeof (value as { type?: unknown }).type === 'string';
}

/**
 * `events()` for createRelayClient: follows the stream for ever, reconnecting with Last-Event-ID
 * (250 ms doubling to 10 s between failed attempts). A `resync` event means events were missed:
 * reload GET /internal/v1/routers and go on reading. Event types added later reach you too: ignore
 * the ones you do not know.
 * @example
 * for await (const event of relay.events({ signal })) {
 *   if (event.type === 'resync') await reloadRooms()
 *   else if (event.type === 'transport.closed') dropPeer(event.appData)
 * }
 */
export function eventsClient(options: RelayClientOptions, reconnect: ReconnectOptions = {}) {
  const eventsUrl = (baseUrl: string) => `${baseUrl.replace(/\/+$/, '')}/internal/v1/events`;
  const doFetch = (options.fetch ?? fetch) as typeof fetch;
  const minMs = reconnect.minMs ?? 250;
  const maxMs = reconnect.maxMs ?? 10_000;

  return {
    events(eventsOptions: EventsOptions = {}): EventsIterator {
      const { signal } = eventsOptions;
      const idleTimeoutMs = eventsOptions.idleTimeoutMs ?? 60_000;
      const query = (eventsOptions.routerIds ?? []).map((id) => `routerId=${encodeURIComponent(id)}`).join('&');
      let lastEventId = eventsOptions.lastEventId;
      const urls = [options.baseUrl, ...(eventsOptions.failoverBaseUrls ?? [])].map(eventsUrl);
      let turn = 0;

      async function* follow(): AsyncGenerator<RelayStreamEvent, void, undefined> {
        let delay = minMs;
        const backOff = async (ms = delay) => {
          // The next instance in turn (the same one when there is one).
          turn = (turn + 1) % urls.length;
          await sleep(ms, signal);
          delay = Math.min(maxMs, delay * 2);
        };
        while (!signal?.aborted) {
          const attempt = new AbortController();
          const abort = () => attempt.abort();
          signal?.addEventListener('abort', abort, { once: true });
          try {
            const headers: Record<string, string> = { 'X-Internal-Token': options.token, Accept: 'text/event-stream' };
            if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
            let response: Response;
            try {
              const url = urls[turn]!;
              response = await doFetch(query ? `${url}?${query}` : url, { headers, signal: attempt.signal });
            } catch {
              await backOff();
              continue;
            }
            if (!response.ok || !response.body) {
              if (FATAL_STATUSES.has(response.status)) throw await errorOf(response);
              await response.body?.cancel().catch(() => {});
              const retryAfter = Number(response.headers.get('retry-after'));
              await backOff(Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(maxMs, retryAfter * 1000) : delay);
              continue;
            }
            const ready: RelayStreamEvent[] = [];
            const parser = createParser({
              onEvent(message) {
                if (message.data === '') return;
                let parsed: unknown;
                try {
                  parsed = JSON.parse(message.data);
                } catch {
                  return;
                }
                if (isEvent(parsed)) ready.push(parsed);
              },
              onComment(comment) {
                const cursor = /^\s*cursor (\S+)\s*$/.exec(comment);
                if (cursor) lastEventId = cursor[1];
              },
              // An event larger than this is not one of ours: drop the connection rather than hold it.
              onError(error) {
                if (error.type === 'max-buffer-size-exceeded') abort();
              },
              maxBufferSize: MAX_EVENT_BYTES,
            });
            const reader = (response.body as ReadableStream<Uint8Array>).getReader();
            const decoder = new TextDecoder();
            let idle: NodeJS.Timeout | undefined;
            const watch = () => {
              clearTimeout(idle);
              idle = setTimeout(abort, idleTimeoutMs);
            };
            try {
              for (;;) {
                watch();
                const { done, value } = await reader.read();
                clearTimeout(idle);
                if (done) break;
                parser.feed(decoder.decode(value, { stream: true }));
                while (ready.length > 0) {
                  const event = ready.shift()!;
                  lastEventId = event.id;
                  delay = minMs; // a stream that delivers is healthy: the next drop reconnects quickly
                  yield event;
                }
              }
            } catch {
              // the connection dropped (or went silent): reconnect below
            } finally {
              clearTimeout(idle);
              await reader.cancel().catch(() => {});
            }
            await backOff();
          } finally {
            signal?.removeEventListener('abort', abort);
            attempt.abort();
          }
        }
      }

      const iterator = follow();
      return Object.defineProperty(iterator, 'lastEventId', { get: () => lastEventId, enumerable: true }) as EventsIterator;
    },
  };
}

export type WebhookVerificationFailure = 'missing_signature' | 'bad_signature' | 'malformed_body' | 'stale';

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checks a webhook delivery and returns its batch. A delivery carries two signatures of the same body,
 * and each one present must hold (one at least, so a relay or a proxy that sends only one passes):
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`): one of the
 *   `v1,<base64>` in `webhook-signature` is the HMAC-SHA256 of `<id>.<timestamp>.<raw body>` under the
 *   secret's key (a `whsec_<base64>` secret: the decoded bytes; any other: its UTF-8 bytes), and
 *   `webhook-timestamp` is within `toleranceS` of now.
 * - `X-Relay-Signature` (`sha256=<hex>`): the HMAC-SHA256 of the raw body under the secret as given,
 *   and the `timestamp` inside the body is within `toleranceS` of now.
 * Signatures are compared in constant time; the tolerance (default 300) refuses a replay. Throws
 * WebhookVerificationError otherwise. Pass the body exactly as received, before any JSON parsing.
 * @example
 * const batch = verifyWebhook(await c.req.text(), c.req.raw.headers, process.env.EVENTS_WEBHOOK_SECRET!)
 */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: HeaderSource,
  secret: string,
  options: { toleranceS?: number; now?: () => number } = {},
): WebhookBatch {
  const toleranceS = options.toleranceS ?? 300;
  const now = options.now ?? Date.now;
  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const standard = header(headers, 'webhook-signature');
  const given = header(headers, 'x-relay-signature');
  if (standard === undefined && given === undefined) {
    throw new WebhookVerificationError('missing_signature', 'neither webhook-signature nor X-Relay-Signature is present');
  }
  // The times the signatures vouch for: the header's under Standard Webhooks, the body's under X-Relay-Signature.
  const signedAt: number[] = [];
  if (standard !== undefined) signedAt.push(verifyStandardSignature(raw, headers, standard, secret));
  if (given !== undefined) {
    const match = /^sha256=([0-9a-f]{64})$/i.exec(given.trim());
    const expected = createHmac('sha256', secret).update(raw).digest();
    if (!match || !timingSafeEqual(Buffer.from(match[1]!, 'hex'), expected)) {
      throw new WebhookVerificationError('bad_signature', 'signature does not match the body');
    }
  }
  let batch: unknown;
  try {
    batch = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('malformed_body', 'body is not JSON');
  }
  const b = batch as Partial<WebhookBatch> | null;
  if (!b || typeof b !== 'object' || !Number.isInteger(b.timestamp) || !Number.isInteger(b.dropped) || !Array.isArray(b.events)) {
    throw new WebhookVerificationError('malformed_body', 'body is not a webhook batch');
  }
  if (given !== undefined) signedAt.push(b.timestamp!);
  if (signedAt.some((time) => Math.abs(now() / 1000 - time) > toleranceS)) {
    throw new WebhookVerificationError('stale', `timestamp is more than ${toleranceS} s away from now`);
  }
  return batch as WebhookBatch;
}

/** The Standard Webhooks check of `webhook-signature`; returns the signed `webhook-timestamp`. */
function verifyStandardSignature(raw: Buffer, headers: HeaderSource, signatures: string, secret: string): number {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  if (!id || !timestamp) throw new WebhookVerificationError('missing_signature', 'webhook-signature needs webhook-id and webhook-timestamp');
  if (!/^[0-9]{1,15}$/.test(timestamp.trim())) throw new WebhookVerificationError('bad_signature', 'webhook-timestamp is not Unix seconds');
  const signedAt = Number(timestamp.trim());
  const expected = Buffer.from(signStandardWebhook(standardWebhooksKey(secret), id, signedAt, raw).slice('v1,'.length), 'base64');
  // Space-separated `<version>,<base64>` entries (several while a secret is rotated); only v1 is HMAC-SHA256.
  const matches = signatures
    .split(' ')
    .map((entry) => /^v1,([A-Za-z0-9+/]{43}=)$/.exec(entry))
    .some((m) => m !== null && timingSafeEqual(Buffer.from(m[1]!, 'base64'), expected));
  if (!matches) throw new WebhookVerificationError('bad_signature', 'signature does not match the body');
  return signedAt;
}
